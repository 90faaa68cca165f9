//! Validation and resolution: a [`Config`] becomes a [`Scenario`] the engine can run, or a
//! [`ConfigError`] naming the field.

use serde::{Deserialize, Serialize};

use crate::config::{Config, DistConfig, LoadMode, SloConfig, ThinkDist, WorkloadPreset};
use crate::cost::{CostModel, Frontend};
#[cfg(feature = "empirical")]
use crate::dist::Joint;
use crate::dist::TokenDist;
use crate::error::ConfigError;
use crate::traffic::Traffic;

/// Bounded work: the most requests one run may simulate.
pub const MAX_REQUESTS: u32 = 1_000_000;
/// Bounded work: the most closed-loop users.
pub const MAX_USERS: u32 = 100_000;
/// The largest `max_num_seqs`.
pub const MAX_NUM_SEQS: u32 = 16_384;
/// The largest step token budget.
pub const MAX_BATCHED_TOKENS: u32 = 1 << 20;
/// The largest KV cache, in tokens.
pub const MAX_KV_TOKENS: u64 = 1_000_000_000;
/// The highest offered load, as a fraction of capacity.
pub const MAX_OFFERED_LOAD: f64 = 10.0;
/// The lowest offered load, as a fraction of capacity: below it the gaps between arrivals, and
/// so the simulated horizon, grow past anything a run can mean (and past `f64` at the extreme).
pub const MIN_OFFERED_LOAD: f64 = 0.001;
/// The highest explicit arrival rate.
pub const MAX_RATE_RPS: f64 = 1e6;
/// The lowest explicit arrival rate: one request in about eleven simulated days.
pub const MIN_RATE_RPS: f64 = 1e-6;

/// Checks an offered load (a fraction of capacity) against its range, naming `path`.
pub fn check_offered_load(path: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && (MIN_OFFERED_LOAD..=MAX_OFFERED_LOAD).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::new(
            path,
            format!("must be from {MIN_OFFERED_LOAD} to {MAX_OFFERED_LOAD} (a fraction of capacity), got {v}"),
        ))
    }
}

/// The engine's knobs, validated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Engine {
    /// Concurrency cap.
    pub max_num_seqs: u32,
    /// Token budget per step.
    pub max_num_batched_tokens: u32,
    /// Chunked prefill on or off.
    pub chunked_prefill: bool,
    /// KV cache size in blocks.
    pub kv_blocks: u64,
    /// Tokens per block.
    pub block_size_tokens: u32,
}

/// A concrete load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Load {
    /// Arrivals at `rate_rps` with gamma(`burstiness`) gaps (1 = Poisson).
    Open {
        /// Mean arrival rate.
        rate_rps: f64,
        /// Gamma shape of the gaps.
        burstiness: f64,
    },
    /// `users` users thinking `think_s` on average between answer and next request.
    Closed {
        /// Population.
        users: u32,
        /// Mean think time.
        think_s: f64,
        /// Think time distribution.
        think: ThinkDist,
    },
    /// Every request at time 0, with at most `concurrency` in flight when given (each finished
    /// one replaced at once), then the drain.
    Burst {
        /// The most requests in flight at once.
        concurrency: Option<u32>,
    },
    /// A replica behind a router: it draws no arrivals of its own; the router hands it each
    /// request ([`crate::Simulation::push_arrival`]), and the run never ends by itself.
    Routed,
}

/// How the config asked for load, before capacity is known.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LoadSpec {
    Rate { rate_rps: f64, burstiness: f64 },
    Offered { offered_load: f64, burstiness: f64 },
    Users { users: u32, think_s: f64, think: ThinkDist },
    ClosedOffered { offered_load: f64, think_s: f64, think: ThinkDist },
    Burst { concurrency: Option<u32> },
}

/// SLOs in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slo {
    /// TTFT objective.
    pub ttft_s: f64,
    /// TPOT objective.
    pub tpot_s: f64,
}

impl Slo {
    /// Back in the config's milliseconds (TTFT, TPOT), as a Summary reports what it was judged by.
    pub fn ms(self) -> (f64, f64) {
        (self.ttft_s * 1e3, self.tpot_s * 1e3)
    }
}

impl SloConfig {
    /// The SLOs in seconds: the one place the config's milliseconds are converted.
    pub fn slo(&self) -> Slo {
        Slo { ttft_s: self.ttft_ms / 1e3, tpot_s: self.tpot_ms / 1e3 }
    }
}

/// A validated, fully resolved run: what [`crate::Simulation`] executes.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Seed of every random stream.
    pub seed: u64,
    /// Engine knobs.
    pub engine: Engine,
    /// Step-time model.
    pub cost: CostModel,
    /// What a request costs outside the engine.
    pub frontend: Frontend,
    /// Prompt lengths.
    pub prompt: TokenDist,
    /// Output lengths.
    pub output: TokenDist,
    /// The load.
    pub load: Load,
    /// SLOs.
    pub slo: Slo,
    /// Requests simulated, warm-up included.
    pub requests: u64,
    /// Requests (by arrival) left out of statistics.
    pub warmup: u64,
    /// The offered load, when the config gave one.
    pub offered_load: Option<f64>,
    /// An open load's rate over time, as a factor of its rate; `None` is constant.
    pub traffic: Option<Traffic>,
}

impl Config {
    /// Checks every field and cross-field rule without running anything.
    pub fn validate(&self) -> Result<(), ConfigError> {
        resolve(self).map(|_| ())
    }
}

impl Scenario {
    /// Validates `config` and resolves a load that is not a fraction of capacity (a rate, users
    /// or a burst). One that is needs the replica's capacity, which this does not measure:
    /// [`crate::prepare`] measures it, [`crate::prepare_scenario`] measures it only when
    /// needed, and [`Scenario::resolve`] reuses one.
    pub fn new(config: &Config) -> Result<Scenario, ConfigError> {
        build(config, Loaded::Own)
    }

    /// Validates `config` and resolves it against a capacity measured for the same engine,
    /// cost model and workload (the load, SLOs and run length may differ). A load given as a
    /// fraction of capacity needs a usable one ([`Capacity::usable`]).
    pub fn resolve(config: &Config, capacity: &Capacity) -> Result<Scenario, ConfigError> {
        build(config, Loaded::Against(capacity))
    }

    /// Validates `config` as a replica behind a router ([`Load::Routed`]): the fleet's traffic is
    /// its load, so the config's own load and run length are checked but not used.
    pub fn routed(config: &Config) -> Result<Scenario, ConfigError> {
        build(config, Loaded::Routed)
    }

    /// Validates `config` and puts its replica under the load its capacity is measured at (a
    /// saturated closed loop, whatever the config's own load): what [`capacity::measure`] and
    /// [`capacity::Measurement`] start from.
    pub fn saturated(config: &Config) -> Result<Scenario, ConfigError> {
        build(config, Loaded::Saturated)
    }

    /// The same scenario with a different load, keeping everything else (and the seed).
    pub fn with_load(&self, load: Load) -> Scenario {
        Scenario { load, offered_load: None, ..self.clone() }
    }

    /// The same scenario at `offered_load` x `capacity` in the same load mode (an open loop keeps
    /// its burstiness, a closed one its think time); `None` for a burst, which has no offered load.
    pub fn at_offered_load(&self, offered_load: f64, capacity: &Capacity) -> Option<Scenario> {
        let spec = match self.load {
            Load::Open { burstiness, .. } => LoadSpec::Offered { offered_load, burstiness },
            Load::Closed { think_s, think, .. } => LoadSpec::ClosedOffered { offered_load, think_s, think },
            Load::Burst { .. } | Load::Routed => return None,
        };
        let (load, offered_load) = spec.against(capacity);
        let mut scenario = self.with_load(load);
        scenario.offered_load = offered_load;
        Some(scenario)
    }

    /// The traffic curve the engine follows: none, whatever the field holds, in a build without
    /// the `traffic` feature (the page's wasm), so the thinning code is left out of it.
    #[inline]
    pub fn traffic(&self) -> Option<Traffic> {
        if cfg!(feature = "traffic") { self.traffic } else { None }
    }

    /// The offered arrival rate of an open loop.
    pub fn rate_rps(&self) -> Option<f64> {
        match self.load {
            Load::Open { rate_rps, .. } => Some(rate_rps),
            Load::Closed { .. } | Load::Burst { .. } | Load::Routed => None,
        }
    }
}

impl LoadSpec {
    /// The load, when it is not a fraction of capacity.
    fn concrete(self) -> Option<Load> {
        match self {
            LoadSpec::Rate { rate_rps, burstiness } => Some(Load::Open { rate_rps, burstiness }),
            LoadSpec::Users { users, think_s, think } => Some(Load::Closed { users, think_s, think }),
            LoadSpec::Burst { concurrency } => Some(Load::Burst { concurrency }),
            LoadSpec::Offered { .. } | LoadSpec::ClosedOffered { .. } => None,
        }
    }

    /// The load against `capacity`, and the offered load it is (for a fraction of capacity).
    fn against(self, capacity: &Capacity) -> (Load, Option<f64>) {
        match self {
            LoadSpec::Rate { rate_rps, burstiness } => (Load::Open { rate_rps, burstiness }, None),
            LoadSpec::Users { users, think_s, think } => (Load::Closed { users, think_s, think }, None),
            LoadSpec::Burst { concurrency } => (Load::Burst { concurrency }, None),
            LoadSpec::Offered { offered_load, burstiness } => {
                (Load::Open { rate_rps: offered_load * capacity.rps, burstiness }, Some(offered_load))
            }
            LoadSpec::ClosedOffered { offered_load, think_s, think } => {
                let users = closed_users(offered_load, think_s, capacity);
                (Load::Closed { users, think_s, think }, Some(offered_load))
            }
        }
    }
}

/// Which load a validated config is resolved under.
#[derive(Clone, Copy)]
enum Loaded<'a> {
    /// Its own, which may not be a fraction of capacity.
    Own,
    /// Its own, against this capacity.
    Against(&'a Capacity),
    /// The load its capacity is measured at.
    Saturated,
    /// A router's.
    Routed,
}

/// Validates `config` and resolves it under the load `loaded` says (one body for every
/// constructor: the page's wasm carries it once).
#[inline(never)]
fn build(config: &Config, loaded: Loaded) -> Result<Scenario, ConfigError> {
    let resolved = resolve(config)?;
    let spec = resolved.spec;
    let (load, offered_load) = match (loaded, spec.concrete()) {
        (Loaded::Saturated, _) => (saturating_load(&resolved.engine), None),
        (Loaded::Routed, _) => (Load::Routed, None),
        (Loaded::Own | Loaded::Against(_), Some(load)) => (load, None),
        (Loaded::Against(capacity), None) => spec.against(&capacity.usable()?),
        (Loaded::Own, None) => {
            return Err(ConfigError::new(
                "load.offered_load",
                "is a fraction of the replica's capacity, which must be measured first (kneelab_sim::prepare)",
            ));
        }
    };
    Ok(resolved.under(load, offered_load))
}

/// A validated config whose load may still wait for a capacity: every field of a [`Scenario`]
/// but the load, and the load as the config gave it.
struct Resolved {
    seed: u64,
    engine: Engine,
    cost: CostModel,
    frontend: Frontend,
    prompt: TokenDist,
    output: TokenDist,
    slo: Slo,
    requests: u64,
    warmup: u64,
    traffic: Option<Traffic>,
    spec: LoadSpec,
}

impl Resolved {
    fn under(self, load: Load, offered_load: Option<f64>) -> Scenario {
        let Resolved { seed, engine, cost, frontend, prompt, output, slo, requests, warmup, traffic, spec: _ } = self;
        Scenario { seed, engine, cost, frontend, prompt, output, load, slo, requests, warmup, offered_load, traffic }
    }
}

#[cfg(feature = "empirical")]
/// A ShareGPT-like joint table of `(prompt tokens, output tokens, weight)`: 40 cells (8 prompt
/// bands by 5 output bands, each at its mean, weighted by its share in thousandths).
///
/// Built, not sampled from the dataset: from the summary statistics commonly reported for
/// ShareGPT as `vllm bench` samples it (prompts mean about 205 tokens and median about 77 with a
/// long tail; outputs mean about 200 and median about 160; the two correlated), with two
/// assumptions of ours: prompts are 78% a lognormal (median 55, sigma 1.0) and 22% uniform over
/// 250-1024 tokens, and outputs (lognormal, median 160, mean 200) follow the prompt's rank at a
/// Gaussian-copula correlation of 0.3; then pruned as `vllm bench` prunes (prompt at most 1024,
/// prompt + output at most 2048). Its means are 210 and 197.
pub const SHAREGPT_LIKE: [(u64, u64, f64); 40] = [
    (12, 62, 42.0),
    (13, 111, 28.0),
    (13, 158, 21.0),
    (13, 226, 16.0),
    (14, 388, 10.0),
    (26, 64, 34.0),
    (26, 112, 30.0),
    (26, 159, 25.0),
    (27, 227, 21.0),
    (27, 398, 15.0),
    (42, 65, 30.0),
    (42, 112, 29.0),
    (42, 159, 26.0),
    (42, 227, 24.0),
    (42, 398, 19.0),
    (64, 66, 25.0),
    (64, 112, 28.0),
    (64, 160, 27.0),
    (64, 228, 26.0),
    (64, 405, 22.0),
    (99, 67, 22.0),
    (100, 113, 25.0),
    (99, 160, 26.0),
    (100, 229, 27.0),
    (100, 409, 25.0),
    (186, 67, 18.0),
    (186, 113, 23.0),
    (187, 161, 27.0),
    (188, 229, 28.0),
    (189, 414, 29.0),
    (420, 68, 15.0),
    (425, 113, 21.0),
    (425, 161, 25.0),
    (429, 230, 30.0),
    (432, 426, 34.0),
    (789, 70, 10.0),
    (797, 114, 17.0),
    (808, 161, 23.0),
    (815, 231, 31.0),
    (829, 443, 45.0),
];

/// The prompt and output distributions of a named workload drawn independently (`None` for one
/// drawn from a joint table).
pub fn workload_preset(preset: WorkloadPreset) -> Option<(DistConfig, DistConfig)> {
    Some(match preset {
        // Conversational: prompts and answers of a few hundred tokens, long-tailed.
        WorkloadPreset::Chat => {
            (DistConfig::lognormal(256.0, 0.8, Some(4096)), DistConfig::lognormal(256.0, 0.8, Some(2048)))
        }
        // Retrieval-augmented: long prompts of retrieved context, short answers; means 3000:100,
        // inside the 19:1 to 47:1 prompt:output ratios reported for RAG traffic. The caps keep
        // the longest request (7680 + 512) within an 8192-token unchunked budget.
        WorkloadPreset::Rag => {
            (DistConfig::lognormal(3000.0, 0.5, Some(7680)), DistConfig::lognormal(100.0, 0.5, Some(512)))
        }
        #[cfg(feature = "empirical")]
        WorkloadPreset::Sharegpt => return None,
    })
}

/// The prompt and output distributions of a workload config.
fn workload(w: &crate::config::WorkloadConfig) -> Result<(TokenDist, TokenDist), ConfigError> {
    #[cfg(feature = "empirical")]
    let table = match (&w.empirical, w.preset) {
        (Some(rows), _) => Some((&rows[..], "workload.empirical")),
        (None, Some(WorkloadPreset::Sharegpt)) => Some((&SHAREGPT_LIKE[..], "workload.preset")),
        (None, _) => None,
    };
    #[cfg(feature = "empirical")]
    if let Some((rows, path)) = table {
        let others = [
            ("preset", w.preset.is_some() && w.empirical.is_some()),
            ("prompt_tokens", w.prompt_tokens.is_some()),
            ("output_tokens", w.output_tokens.is_some()),
        ];
        if let Some((name, _)) = others.iter().find(|(_, set)| *set) {
            return Err(ConfigError::new(
                format!("workload.{name}"),
                "cannot be combined with a joint table (workload.empirical or the \"sharegpt\" preset)",
            ));
        }
        return Joint::columns(rows, path);
    }
    let preset = w.preset.and_then(workload_preset);
    let prompt_cfg = w.prompt_tokens.clone().or_else(|| preset.clone().map(|p| p.0)).ok_or_else(|| {
        ConfigError::new("workload.prompt_tokens", "is required unless workload.preset or workload.empirical is set")
    })?;
    let prompt = TokenDist::from_config(&prompt_cfg, "workload.prompt_tokens")?;
    let output_cfg = w.output_tokens.clone().or_else(|| preset.map(|p| p.1)).ok_or_else(|| {
        ConfigError::new("workload.output_tokens", "is required unless workload.preset or workload.empirical is set")
    })?;
    Ok((prompt, TokenDist::from_config(&output_cfg, "workload.output_tokens")?))
}

fn resolve(c: &Config) -> Result<Resolved, ConfigError> {
    let e = &c.engine;
    range_u64("engine.max_num_seqs", e.max_num_seqs as u64, 1, MAX_NUM_SEQS as u64)?;
    range_u64("engine.max_num_batched_tokens", e.max_num_batched_tokens as u64, 1, MAX_BATCHED_TOKENS as u64)?;
    range_u64("engine.block_size_tokens", e.block_size_tokens as u64, 1, 1024)?;
    range_u64("engine.kv_cache_tokens", e.kv_cache_tokens, e.block_size_tokens as u64, MAX_KV_TOKENS)?;
    if e.max_num_batched_tokens < e.max_num_seqs {
        return Err(ConfigError::new(
            "engine.max_num_batched_tokens",
            format!(
                "must be at least engine.max_num_seqs ({}) so every running sequence can decode each step, got {}",
                e.max_num_seqs, e.max_num_batched_tokens
            ),
        ));
    }
    let engine = Engine {
        max_num_seqs: e.max_num_seqs,
        max_num_batched_tokens: e.max_num_batched_tokens,
        chunked_prefill: e.chunked_prefill,
        kv_blocks: e.kv_cache_tokens / e.block_size_tokens as u64,
        block_size_tokens: e.block_size_tokens,
    };
    let cost = CostModel::from_config(&c.cost)?;

    let (prompt, output) = workload(&c.workload)?;

    if !engine.chunked_prefill {
        // vLLM requires max_num_batched_tokens >= max_model_len without chunked prefill: a prompt,
        // or a preempted request's recompute of prompt + output, must run in one step.
        let (p, o) = (prompt.bound(), output.bound());
        let Some(p) = p else {
            return Err(ConfigError::new(
                "workload.prompt_tokens.max",
                "is required with chunked prefill off: the longest prompt must fit one step's token budget",
            ));
        };
        let Some(o) = o else {
            return Err(ConfigError::new(
                "workload.output_tokens.max",
                "is required with chunked prefill off: a preempted request recomputes prompt + output in one step",
            ));
        };
        if p as u64 + o as u64 > e.max_num_batched_tokens as u64 {
            return Err(ConfigError::new(
                "engine.max_num_batched_tokens",
                format!(
                    "must hold the longest request ({p} prompt + {o} output = {} tokens) when chunked prefill is off, \
                     as vLLM requires max_num_batched_tokens >= max_model_len; got {}",
                    p as u64 + o as u64,
                    e.max_num_batched_tokens
                ),
            ));
        }
    }
    if let (Some(p), Some(o)) = (prompt.bound(), output.bound()) {
        let need = p as u64 + o as u64 - 1;
        let need_blocks = need.div_ceil(engine.block_size_tokens as u64);
        if need_blocks > engine.kv_blocks {
            return Err(ConfigError::new(
                "engine.kv_cache_tokens",
                format!(
                    "is too small for the longest request ({need} tokens of KV cache, {need_blocks} blocks of {}); got {}",
                    engine.block_size_tokens, e.kv_cache_tokens
                ),
            ));
        }
    }

    let l = &c.load;
    let not_for = |name: &str, set: bool, mode: &str| {
        if set {
            Err(ConfigError::new(format!("load.{name}"), format!("does not apply to mode \"{mode}\"")))
        } else {
            Ok(())
        }
    };
    let traffic = traffic_of(l)?;
    let spec = match l.mode {
        LoadMode::Open | LoadMode::Closed if l.max_concurrency.is_some() => {
            return Err(ConfigError::new("load.max_concurrency", "applies to mode \"burst\" only"));
        }
        LoadMode::Burst => {
            for (name, set) in [
                ("rate_rps", l.rate_rps.is_some()),
                ("offered_load", l.offered_load.is_some()),
                ("burstiness", l.burstiness.is_some()),
                ("users", l.users.is_some()),
                ("think_time_s", l.think_time_s.is_some()),
                ("think_dist", l.think_dist.is_some()),
            ] {
                not_for(name, set, "burst")?;
            }
            if let Some(n) = l.max_concurrency {
                range_u64("load.max_concurrency", n as u64, 1, MAX_USERS as u64)?;
            }
            if c.run.warmup_requests.is_some_and(|w| w > 0) {
                return Err(ConfigError::new(
                    "run.warmup_requests",
                    "must be 0 for mode \"burst\" (it measures every request)",
                ));
            }
            LoadSpec::Burst { concurrency: l.max_concurrency }
        }
        LoadMode::Open => {
            not_for("users", l.users.is_some(), "open")?;
            not_for("think_time_s", l.think_time_s.is_some(), "open")?;
            not_for("think_dist", l.think_dist.is_some(), "open")?;
            let burstiness = l.burstiness.unwrap_or(1.0);
            range_f64("load.burstiness", burstiness, 0.01, 100.0, "(1 = Poisson, lower = burstier)")?;
            match (l.rate_rps, l.offered_load) {
                (Some(_), Some(_)) => {
                    return Err(ConfigError::new(
                        "load.offered_load",
                        "give either rate_rps or offered_load, not both",
                    ));
                }
                (None, None) => {
                    return Err(ConfigError::new(
                        "load.rate_rps",
                        "an open load needs rate_rps (requests/s) or offered_load (fraction of capacity)",
                    ));
                }
                (Some(rate_rps), None) => {
                    range_f64("load.rate_rps", rate_rps, MIN_RATE_RPS, MAX_RATE_RPS, "requests/s")?;
                    if let Some(t) = traffic {
                        let top = rate_rps * t.max_factor();
                        range_f64("load.traffic.factor", top, 0.0, MAX_RATE_RPS, "requests/s at the curve's highest")?;
                    }
                    LoadSpec::Rate { rate_rps, burstiness }
                }
                (None, Some(offered_load)) => {
                    check_offered_load("load.offered_load", offered_load)?;
                    if let Some(t) = traffic {
                        let top = offered_load * t.max_factor();
                        range_f64(
                            "load.traffic.factor",
                            top,
                            0.0,
                            MAX_OFFERED_LOAD,
                            "times capacity at the curve's highest",
                        )?;
                    }
                    LoadSpec::Offered { offered_load, burstiness }
                }
            }
        }
        LoadMode::Closed => {
            not_for("rate_rps", l.rate_rps.is_some(), "closed")?;
            not_for("burstiness", l.burstiness.is_some(), "closed")?;
            let think_s = l.think_time_s.ok_or_else(|| {
                ConfigError::new("load.think_time_s", "is required for mode \"closed\" (0 for no think time)")
            })?;
            range_f64("load.think_time_s", think_s, 0.0, 1e5, "seconds")?;
            let think = l.think_dist.unwrap_or_default();
            match (l.users, l.offered_load) {
                (Some(_), Some(_)) => {
                    return Err(ConfigError::new("load.offered_load", "give either users or offered_load, not both"));
                }
                (None, None) => {
                    return Err(ConfigError::new(
                        "load.users",
                        "a closed load needs users, or offered_load to derive users from capacity",
                    ));
                }
                (Some(users), None) => {
                    range_u64("load.users", users as u64, 1, MAX_USERS as u64)?;
                    LoadSpec::Users { users, think_s, think }
                }
                (None, Some(offered_load)) => {
                    check_offered_load("load.offered_load", offered_load)?;
                    LoadSpec::ClosedOffered { offered_load, think_s, think }
                }
            }
        }
    };

    positive("slo.ttft_ms", c.slo.ttft_ms, 1e9)?;
    positive("slo.tpot_ms", c.slo.tpot_ms, 1e9)?;
    range_u64("run.requests", c.run.requests as u64, 1, MAX_REQUESTS as u64)?;
    let warmup = if l.mode == LoadMode::Burst { 0 } else { c.run.warmup() };
    if warmup >= c.run.requests {
        return Err(ConfigError::new(
            "run.warmup_requests",
            format!("must be below run.requests ({}) so some requests are measured, got {warmup}", c.run.requests),
        ));
    }
    Ok(Resolved {
        seed: c.seed,
        engine,
        cost,
        frontend: Frontend::from_config(&c.cost)?,
        prompt,
        output,
        slo: c.slo.slo(),
        requests: c.run.requests as u64,
        warmup: warmup as u64,
        traffic,
        spec,
    })
}

/// The open load's traffic curve, validated; any other mode may not have one.
#[cfg(feature = "traffic")]
fn traffic_of(l: &crate::config::LoadConfig) -> Result<Option<Traffic>, ConfigError> {
    let Some(t) = &l.traffic else { return Ok(None) };
    if l.mode != LoadMode::Open {
        return Err(ConfigError::new("load.traffic", "applies to mode \"open\" only"));
    }
    Traffic::from_config(t, "load.traffic").map(Some)
}

/// Without the `traffic` feature (the page's wasm) a config cannot name a curve.
#[cfg(not(feature = "traffic"))]
fn traffic_of(_: &crate::config::LoadConfig) -> Result<Option<Traffic>, ConfigError> {
    Ok(None)
}

fn range_u64(path: &str, v: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if (min..=max).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::new(path, format!("must be from {min} to {max}, got {v}")))
    }
}

fn range_f64(path: &str, v: f64, min: f64, max: f64, unit: &str) -> Result<(), ConfigError> {
    if v.is_finite() && v >= min && v <= max {
        Ok(())
    } else {
        Err(ConfigError::new(path, format!("must be from {min} to {max} {unit}, got {v}")))
    }
}

fn positive(path: &str, v: f64, max: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(())
    } else {
        Err(ConfigError::new(path, format!("must be above 0 and at most {max}, got {v}")))
    }
}

/// A replica's measured capacity. Its times may be NaN (an unloaded run that could not finish),
/// which JSON writes as `null`: a `null` reads back as NaN, so a capacity given out (the CLI's
/// JSON, a page's lab) reads back as itself.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// Saturation throughput in requests per second.
    #[serde(deserialize_with = "null_as_nan")]
    pub rps: f64,
    /// Mean E2E latency of a request alone on the replica (the unloaded latency).
    #[serde(deserialize_with = "null_as_nan")]
    pub base_latency_s: f64,
    /// Completions counted in the measurement window.
    pub completions_counted: u64,
    /// Length of the measurement window.
    #[serde(deserialize_with = "null_as_nan")]
    pub window_s: f64,
}

/// A number, or `null` (how JSON writes NaN and the infinities) as NaN.
fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl Capacity {
    /// This capacity, if an offered load can be a fraction of it; else the error naming why not.
    pub fn usable(self) -> Result<Capacity, ConfigError> {
        if self.rps > 0.0 && self.rps.is_finite() {
            Ok(self)
        } else {
            Err(ConfigError::new(
                "load.offered_load",
                "cannot be used here: the replica finished no request within the simulation's work limit, \
                 so its capacity is unknown; give load.rate_rps, shorter requests or a larger token budget",
            ))
        }
    }
}

/// The load a capacity is measured at: a closed loop of 4 x `max_num_seqs` users with no think
/// time, which keeps the batch full and a queue behind it.
pub fn saturating_load(engine: &Engine) -> Load {
    let users = engine.max_num_seqs.saturating_mul(4).min(MAX_USERS);
    Load::Closed { users, think_s: 0.0, think: ThinkDist::Fixed }
}

/// Closed-loop users that would offer `offered_load` x capacity if every request took the
/// unloaded latency: `N = x C (Z + W0)`. Once the replica slows, they offer less: that is the point.
pub fn closed_users(offered_load: f64, think_s: f64, capacity: &Capacity) -> u32 {
    let users = offered_load * capacity.rps * (think_s + capacity.base_latency_s);
    (users.round().max(1.0) as u64).min(MAX_USERS as u64) as u32
}

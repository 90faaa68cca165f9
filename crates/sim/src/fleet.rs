//! A fleet of replicas behind a router and an autoscaler, on one clock.
//!
//! Every replica is the replica model of [`Simulation`], fed by the router (its scenario's load
//! is [`crate::scenario::Load::Routed`]). Traffic is a rate over time (constant, step, ramp,
//! diurnal, spike) drawn by thinning a Poisson or gamma stream at the peak rate. The fleet's
//! events are the arrivals, the scrapes (every `run.sample_s`, when the gauges are read, the time
//! series gains a row and the autoscaler may act) and replicas becoming ready after their cold
//! start.
//! Replicas are advanced lazily, each only when the router or a scrape needs to see it, and never
//! past the event at hand: the exact multi-step decode jumps are cut at that event
//! ([`Simulation::set_horizon`]), so a replica fed by the router runs exactly as one fed by its
//! own arrival stream. A replica seen at time `t` shows the step in progress at `t` as finished
//! (a step is tens of milliseconds; vLLM's own gauges are updated at step boundaries too).
//!
//! Work is bounded: caps on replicas ([`MAX_REPLICAS`]), requests ([`MAX_FLEET_REQUESTS`]),
//! simulated time ([`MAX_DURATION_S`]), scrapes ([`MAX_SAMPLES`]) and engine work per replica.

use serde::{Deserialize, Serialize};

use crate::config::{Config, CostConfig, EngineConfig, SloConfig, WorkloadConfig, default_seed};
use crate::error::ConfigError;
use crate::limits::limits;
use crate::sampling::{Gamma, Stream};
use crate::scenario::{Scenario, Slo};
use crate::simulation::{Finished, MAX_WORK, Options, Simulation, gap_gamma, splitmix64};
use crate::traffic::{Curve, TrafficShape};

/// The most replicas a fleet may have at once.
pub const MAX_REPLICAS: u32 = 256;
/// The most requests a fleet run may see (by the traffic's expected count, and as a hard stop).
pub const MAX_FLEET_REQUESTS: u64 = 2_000_000;
/// The longest simulated run: a week.
pub const MAX_DURATION_S: f64 = 7.0 * 86_400.0;
/// The most scrapes (time-series rows) in a run.
pub const MAX_SAMPLES: f64 = 100_000.0;
/// The longest cold start: an hour.
pub const MAX_COLD_START_S: f64 = 3_600.0;
/// The highest traffic rate.
pub const MAX_FLEET_RPS: f64 = 100_000.0;
/// Engine work one replica may do (in [`MAX_WORK`]'s units).
const REPLICA_WORK: u64 = 20 * MAX_WORK;

/// A fleet: the replica (engine, cost model, workload, SLOs), the traffic, the router, the
/// autoscaler and the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetConfig {
    /// Seed of every random stream.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Every replica's engine.
    #[serde(default)]
    pub engine: EngineConfig,
    /// Every replica's step-time model.
    #[serde(default)]
    pub cost: CostConfig,
    /// Request sizes.
    #[serde(default)]
    pub workload: WorkloadConfig,
    /// The latency promises a good request keeps.
    #[serde(default)]
    pub slo: SloConfig,
    /// Offered rate over time.
    #[serde(default)]
    pub traffic: TrafficConfig,
    /// Which replica gets each request.
    #[serde(default)]
    pub router: RouterConfig,
    /// When replicas are added and drained.
    #[serde(default)]
    pub autoscaler: AutoscalerConfig,
    /// Length, scrape period and price.
    #[serde(default)]
    pub run: FleetRunConfig,
}

impl Default for FleetConfig {
    fn default() -> Self {
        FleetConfig {
            seed: default_seed(),
            engine: EngineConfig::default(),
            cost: CostConfig::default(),
            workload: WorkloadConfig::default(),
            slo: SloConfig::default(),
            traffic: TrafficConfig::default(),
            router: RouterConfig::default(),
            autoscaler: AutoscalerConfig::default(),
            run: FleetRunConfig::default(),
        }
    }
}

/// Offered traffic: absolute rates, where a replica's `load.traffic` takes multiples of its
/// base rate; the rest (`shape`, `at_s`, `duration_s`, `burstiness`) reads as it does there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// The rate's shape.
    pub shape: TrafficShape,
    /// The rate outside the step, ramp or spike (and the diurnal trough).
    pub base_rps: f64,
    /// The rate of the step, spike or diurnal peak, and the ramp's end.
    pub peak_rps: f64,
    /// When the step, ramp or spike starts.
    pub at_s: f64,
    /// How long the ramp rises, or the spike lasts.
    pub duration_s: f64,
    /// The gamma shape of the gaps between arrivals: 1 is Poisson, lower is burstier (as a
    /// replica's `load.burstiness` and `vllm bench serve --burstiness`).
    pub burstiness: f64,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            shape: TrafficShape::Diurnal,
            base_rps: 10.0,
            peak_rps: 60.0,
            at_s: 1_200.0,
            duration_s: 600.0,
            burstiness: 1.0,
        }
    }
}

impl TrafficConfig {
    /// The offered rate over a run of `duration_s` (a diurnal day spans the run).
    pub fn curve(&self, duration_s: f64) -> Curve {
        Curve {
            shape: self.shape,
            low: self.base_rps,
            high: self.peak_rps,
            at_s: self.at_s,
            duration_s: self.duration_s,
            period_s: duration_s,
        }
    }

    /// The offered rate at `t_s` in a run of `duration_s`.
    pub fn rate_at(&self, t_s: f64, duration_s: f64) -> f64 {
        self.curve(duration_s).at(t_s)
    }

    /// The highest rate of the run (the thinned stream's rate).
    fn max_rps(&self) -> f64 {
        self.curve(f64::INFINITY).highest()
    }

    /// Requests expected over `duration_s` (a midpoint sum; exact for every shape but the edges
    /// of a step, ramp or spike, which move it by a sliver).
    pub fn expected_requests(&self, duration_s: f64) -> f64 {
        const N: usize = 4096;
        let dt = duration_s / N as f64;
        (0..N).map(|i| self.rate_at((i as f64 + 0.5) * dt, duration_s)).sum::<f64>() * dt
    }
}

/// Which replica gets a request. Only ready replicas that are not draining are candidates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Router {
    /// Each in turn.
    RoundRobin,
    /// Uniformly at random.
    Random,
    /// The fewest requests running plus waiting (first on a tie).
    #[default]
    LeastOutstanding,
    /// The fewest waiting, then the fewest running.
    LeastWaiting,
    /// Two at random; the one with fewer outstanding.
    PowerOfTwo,
    /// The least KV cache in use (prefill-heavy replicas fill it first), then fewest outstanding.
    LeastKv,
}

/// The router.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouterConfig {
    /// The policy.
    pub policy: Router,
}

/// What the autoscaler watches, read at every scrape and judged over `window_s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// Never scale: `initial_replicas` throughout.
    None,
    /// Mean over the window of `num_requests_waiting` per ready replica.
    WaitingMean,
    /// Highest `num_requests_waiting` of any replica in the window.
    WaitingMax,
    /// TTFT p99 (seconds) of requests finished in the window.
    TtftP99,
    /// Mean KV cache usage of the ready replicas (a fraction).
    KvUsage,
    /// "GPU utilisation": the share of ready replicas busy (any request in them) at the scrapes.
    GpuUtil,
    /// Little's Law: the arrival rate over the window as a fraction of the ready replicas'
    /// capacity; the thresholds are the per-replica utilisation to hold.
    Rate,
}

impl Signal {
    /// The highest threshold in the signal's own unit (a fraction, a ratio, seconds, requests).
    pub fn threshold_max(self) -> f64 {
        match self {
            Signal::KvUsage | Signal::GpuUtil => 1.0,
            Signal::Rate => 10.0,
            Signal::TtftP99 => 3_600.0,
            Signal::None | Signal::WaitingMean | Signal::WaitingMax => 1e6,
        }
    }
}

/// The autoscaler. A decision is taken every `interval_s`: above `scale_up` it adds replicas
/// in proportion (`ceil(current x signal / scale_up)`), below `scale_down` it drains one; no
/// decision within `cooldown_s` of the last change. A new replica serves after `cold_start_s`
/// (and costs from the moment it is started); a drained one takes no new requests and is
/// released when its last one finishes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutoscalerConfig {
    /// What it watches.
    pub signal: Signal,
    /// Add replicas above this.
    pub scale_up: f64,
    /// Drain one below this.
    pub scale_down: f64,
    /// Seconds between decisions.
    pub interval_s: f64,
    /// Seconds of scrapes a decision looks back over.
    pub window_s: f64,
    /// Fewest replicas.
    pub min_replicas: u32,
    /// Most replicas.
    pub max_replicas: u32,
    /// Replicas ready at the start (`min_replicas` if absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_replicas: Option<u32>,
    /// Seconds after a change before the next.
    pub cooldown_s: f64,
    /// Seconds from start to ready: model load and CUDA-graph capture.
    pub cold_start_s: f64,
}

impl Default for AutoscalerConfig {
    fn default() -> Self {
        AutoscalerConfig {
            signal: Signal::WaitingMean,
            scale_up: 2.0,
            scale_down: 0.2,
            interval_s: 30.0,
            window_s: 60.0,
            min_replicas: 1,
            max_replicas: 16,
            initial_replicas: None,
            cooldown_s: 60.0,
            cold_start_s: 120.0,
        }
    }
}

/// Length, scrape period and price of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FleetRunConfig {
    /// Simulated seconds of traffic (the fleet then drains).
    pub duration_s: f64,
    /// Seconds between scrapes.
    pub sample_s: f64,
    /// Price of one GPU-hour (one replica for an hour).
    pub gpu_hour_usd: f64,
}

impl Default for FleetRunConfig {
    fn default() -> Self {
        FleetRunConfig { duration_s: 3_600.0, sample_s: 10.0, gpu_hour_usd: 2.0 }
    }
}

fn check(path: &str, v: f64, min: f64, max: f64, min_inclusive: bool) -> Result<(), ConfigError> {
    let above = if min_inclusive { v >= min } else { v > min };
    if v.is_finite() && above && v <= max {
        Ok(())
    } else {
        let lo = if min_inclusive { format!("from {min}") } else { format!("above {min}") };
        Err(ConfigError::new(path, format!("must be {lo} and at most {max}, got {v}")))
    }
}

impl FleetConfig {
    /// Parses a fleet config, naming the field of the first problem (unknown fields rejected).
    pub fn from_json(text: &str) -> Result<FleetConfig, ConfigError> {
        crate::config::from_json(text)
    }

    /// The one-replica config every replica runs. Its load and run length are the defaults and
    /// go unused: [`Scenario::routed`] gives each replica the router's load
    /// ([`crate::scenario::Load::Routed`]).
    pub fn replica_config(&self) -> Config {
        Config {
            seed: self.seed,
            engine: self.engine.clone(),
            cost: self.cost.clone(),
            workload: self.workload.clone(),
            slo: self.slo.clone(),
            ..Config::default()
        }
    }

    /// Checks every field, naming the first bad one by its path.
    pub fn validate(&self) -> Result<Scenario, ConfigError> {
        let scenario = Scenario::routed(&self.replica_config())?;
        let (t, a, r) = (&self.traffic, &self.autoscaler, &self.run);
        check("run.duration_s", r.duration_s, 0.0, MAX_DURATION_S, false)?;
        check("run.sample_s", r.sample_s, 0.1, r.duration_s, true)?;
        if r.duration_s / r.sample_s > MAX_SAMPLES {
            return Err(ConfigError::new(
                "run.sample_s",
                format!("gives more than {MAX_SAMPLES} scrapes over run.duration_s; raise it"),
            ));
        }
        check("run.gpu_hour_usd", r.gpu_hour_usd, 0.0, 1e4, true)?;
        check("traffic.base_rps", t.base_rps, 0.0, MAX_FLEET_RPS, true)?;
        check("traffic.peak_rps", t.peak_rps, 0.0, MAX_FLEET_RPS, true)?;
        if t.max_rps() <= 0.0 {
            return Err(ConfigError::new("traffic.base_rps", "no traffic: the rate is 0 throughout"));
        }
        check("traffic.at_s", t.at_s, 0.0, MAX_DURATION_S, true)?;
        check("traffic.duration_s", t.duration_s, 0.0, MAX_DURATION_S, false)?;
        check("traffic.burstiness", t.burstiness, 0.01, 100.0, true)?;
        let expected = t.expected_requests(r.duration_s);
        if expected > MAX_FLEET_REQUESTS as f64 {
            return Err(ConfigError::new(
                "traffic.peak_rps",
                format!(
                    "gives about {expected:.0} requests, more than {MAX_FLEET_REQUESTS}; lower the rates or run.duration_s"
                ),
            ));
        }
        check("autoscaler.min_replicas", a.min_replicas as f64, 1.0, MAX_REPLICAS as f64, true)?;
        check("autoscaler.max_replicas", a.max_replicas as f64, 1.0, MAX_REPLICAS as f64, true)?;
        if a.min_replicas > a.max_replicas {
            return Err(ConfigError::new(
                "autoscaler.min_replicas",
                format!("must be at most autoscaler.max_replicas ({}), got {}", a.max_replicas, a.min_replicas),
            ));
        }
        if let Some(n) = a.initial_replicas
            && (n < a.min_replicas || n > a.max_replicas)
        {
            return Err(ConfigError::new(
                "autoscaler.initial_replicas",
                format!(
                    "must be from autoscaler.min_replicas ({}) to max_replicas ({}), got {n}",
                    a.min_replicas, a.max_replicas
                ),
            ));
        }
        let unit_max = a.signal.threshold_max();
        check("autoscaler.scale_up", a.scale_up, 0.0, unit_max, false)?;
        check("autoscaler.scale_down", a.scale_down, 0.0, unit_max, true)?;
        if a.scale_down >= a.scale_up {
            return Err(ConfigError::new(
                "autoscaler.scale_down",
                format!("must be below autoscaler.scale_up ({}), got {}", a.scale_up, a.scale_down),
            ));
        }
        check("autoscaler.interval_s", a.interval_s, r.sample_s, MAX_DURATION_S, true)?;
        check("autoscaler.window_s", a.window_s, r.sample_s, MAX_DURATION_S, true)?;
        check("autoscaler.cooldown_s", a.cooldown_s, 0.0, MAX_DURATION_S, true)?;
        check("autoscaler.cold_start_s", a.cold_start_s, 0.0, MAX_COLD_START_S, true)?;
        Ok(scenario)
    }
}

/// One scrape of the fleet.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FleetPoint {
    /// When.
    pub t_s: f64,
    /// The traffic's rate then.
    pub offered_rps: f64,
    /// Arrivals since the last scrape, per second.
    pub arrived_rps: f64,
    /// Replicas serving.
    pub ready: u32,
    /// Replicas in their cold start.
    pub starting: u32,
    /// Replicas draining.
    pub draining: u32,
    /// Ready replicas x one replica's capacity.
    pub capacity_rps: f64,
    /// `num_requests_waiting` summed over the fleet.
    pub waiting: u32,
    /// The most waiting at any replica.
    pub waiting_max: u32,
    /// TTFT p99 of requests finished since the last scrape (`NaN`: none finished).
    pub ttft_p99_s: f64,
    /// Share of requests finished since the last scrape that met both SLOs (`NaN`: none).
    pub attainment: f64,
    /// Share of ready replicas with any request in them.
    pub busy: f64,
    /// Mean KV cache usage of the ready replicas.
    pub kv_usage: f64,
    /// The autoscaler's signal at this scrape (`NaN` with no signal).
    pub signal: f64,
}

/// A fleet run's totals.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FleetTotals {
    /// Requests that arrived.
    pub requests: u64,
    /// Requests that finished.
    pub completed: u64,
    /// Requests that met both SLOs.
    pub good: u64,
    /// `good / completed`.
    pub attainment: f64,
    /// Good requests per second of the run.
    pub goodput_rps: f64,
    /// Mean TTFT over the run.
    pub ttft_mean_s: f64,
    /// TTFT p99 over the run.
    pub ttft_p99_s: f64,
    /// Replica-hours from each replica's start to its release (or the run's end).
    pub gpu_hours: f64,
    /// `gpu_hours x run.gpu_hour_usd`.
    pub cost_usd: f64,
    /// Cost per 1,000 good requests (infinite with none).
    pub cost_per_1k_good_usd: f64,
    /// The most replicas at once (starting and draining included).
    pub peak_replicas: u32,
    /// Replicas started after the first ones.
    pub scale_ups: u32,
    /// Replicas drained.
    pub scale_downs: u32,
    /// One replica's capacity (its binding limit's rate).
    pub replica_capacity_rps: f64,
    /// A cap stopped the run early.
    pub truncated: bool,
}

/// A fleet run: the scrapes and the totals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetResult {
    /// One row per scrape.
    pub series: Vec<FleetPoint>,
    /// The totals.
    pub totals: FleetTotals,
}

struct Replica {
    sim: Simulation,
    started_s: f64,
    ready_s: f64,
    draining: bool,
    released_s: Option<f64>,
}

impl Replica {
    fn serving(&self, t: f64) -> bool {
        self.released_s.is_none() && !self.draining && self.ready_s <= t
    }

    fn advance(&mut self, t: f64) {
        self.sim.set_horizon(t);
        self.sim.advance_to(t);
    }

    fn outstanding(&self) -> u64 {
        self.sim.in_flight()
    }
}

/// Arrivals at a rate over time, by thinning a stream at the peak rate.
struct Arrivals {
    gaps: Stream,
    thin: Stream,
    gamma: Option<Gamma>,
    max_rps: f64,
    t: f64,
}

impl Arrivals {
    fn next(&mut self, traffic: &TrafficConfig, duration_s: f64) -> f64 {
        loop {
            let unit = match &self.gamma {
                Some(g) => g.sample(&mut self.gaps),
                None => self.gaps.exp1(),
            };
            self.t += unit / self.max_rps;
            if self.t > duration_s || self.thin.uniform() * self.max_rps < traffic.rate_at(self.t, duration_s) {
                return self.t;
            }
        }
    }
}

/// The fleet in motion: [`Fleet::advance`] runs it a slice of simulated time at a time, so a
/// page can answer input between slices.
pub struct Fleet {
    config: FleetConfig,
    scenario: Scenario,
    slo: Slo,
    capacity_rps: f64,
    replicas: Vec<Replica>,
    arrivals: Arrivals,
    next_arrival_s: f64,
    next_sample_s: f64,
    next_decision_s: f64,
    last_change_s: f64,
    route: Stream,
    rr: usize,
    arrived: u64,
    arrived_since: u64,
    finished: Vec<Finished>,
    /// Per scrape in the window: TTFTs finished then, and the gauges.
    window: std::collections::VecDeque<Scrape>,
    ttfts: Vec<f64>,
    completed: u64,
    good: u64,
    /// `(good, completed)` at the last scrape.
    last_counts: (u64, u64),
    scale_ups: u32,
    scale_downs: u32,
    peak: u32,
    series: Vec<FleetPoint>,
    truncated: bool,
    done: bool,
}

struct Scrape {
    ttfts: Vec<f64>,
    waiting_per_replica: f64,
    waiting_max: u32,
    kv: f64,
    busy: f64,
    arrived: u64,
    ready: u32,
}

/// Runs `config` to the end.
pub fn run_fleet(config: &FleetConfig) -> Result<FleetResult, ConfigError> {
    let mut fleet = Fleet::new(config)?;
    while !fleet.advance(f64::INFINITY)? {}
    Ok(fleet.result())
}

impl Fleet {
    /// A validated fleet at time 0, its first replicas ready.
    pub fn new(config: &FleetConfig) -> Result<Fleet, ConfigError> {
        let scenario = config.validate()?;
        let capacity_rps = limits(&scenario).rps;
        let stream = |k: u64| Stream::new(splitmix64(config.seed ^ splitmix64(k.wrapping_add(0xF1EE7))));
        let t = &config.traffic;
        let mut arrivals =
            Arrivals { gaps: stream(1), thin: stream(2), gamma: gap_gamma(t.burstiness), max_rps: t.max_rps(), t: 0.0 };
        let next_arrival_s = arrivals.next(t, config.run.duration_s);
        let a = &config.autoscaler;
        let mut fleet = Fleet {
            slo: scenario.slo,
            capacity_rps,
            replicas: Vec::new(),
            arrivals,
            next_arrival_s,
            next_sample_s: config.run.sample_s,
            next_decision_s: a.interval_s,
            last_change_s: f64::NEG_INFINITY,
            route: stream(3),
            rr: 0,
            arrived: 0,
            arrived_since: 0,
            finished: Vec::new(),
            window: Default::default(),
            ttfts: Vec::new(),
            completed: 0,
            good: 0,
            last_counts: (0, 0),
            scale_ups: 0,
            scale_downs: 0,
            peak: 0,
            series: Vec::new(),
            truncated: false,
            done: false,
            scenario,
            config: config.clone(),
        };
        for _ in 0..a.initial_replicas.unwrap_or(a.min_replicas) {
            fleet.start_replica(0.0, 0.0);
        }
        Ok(fleet)
    }

    /// The SLOs every request is judged by, in seconds.
    pub fn slo(&self) -> Slo {
        self.slo
    }

    /// One replica's capacity (its binding limit's rate), which scales "fleet capacity".
    pub fn replica_capacity_rps(&self) -> f64 {
        self.capacity_rps
    }

    /// The scrapes so far.
    pub fn series(&self) -> &[FleetPoint] {
        &self.series
    }

    fn start_replica(&mut self, t: f64, cold_start_s: f64) {
        let index = self.replicas.len() as u64;
        let scenario = Scenario { seed: splitmix64(self.config.seed ^ splitmix64(index)), ..self.scenario.clone() };
        let options = Options { max_work: REPLICA_WORK, ..Options::default() };
        self.replicas.push(Replica {
            sim: Simulation::routed(&scenario, options),
            started_s: t,
            ready_s: t + cold_start_s,
            draining: false,
            released_s: None,
        });
    }

    /// Runs until simulated time `until_s` (or the end); returns whether the run is over.
    pub fn advance(&mut self, until_s: f64) -> Result<bool, ConfigError> {
        let duration = self.config.run.duration_s;
        while !self.done {
            let t = self.next_arrival_s.min(self.next_sample_s);
            if t > until_s {
                return Ok(false);
            }
            if t > duration {
                self.finish()?;
                break;
            }
            if self.next_arrival_s <= self.next_sample_s {
                self.route_arrival(t)?;
                self.next_arrival_s = self.arrivals.next(&self.config.traffic, duration);
            } else {
                self.scrape(t)?;
                self.next_sample_s += self.config.run.sample_s;
            }
        }
        Ok(true)
    }

    fn route_arrival(&mut self, t: f64) -> Result<(), ConfigError> {
        if self.arrived >= MAX_FLEET_REQUESTS {
            self.truncated = true;
            return Ok(());
        }
        let candidates: Vec<usize> = (0..self.replicas.len()).filter(|&i| self.replicas[i].serving(t)).collect();
        // Validation keeps min_replicas >= 1 and the first replicas start ready; scale-down
        // leaves at least min_replicas serving, so there is always a candidate.
        let Some(&first) = candidates.first() else { return Ok(()) };
        let sees_load = !matches!(self.config.router.policy, Router::RoundRobin | Router::Random);
        if sees_load {
            for &i in &candidates {
                self.replicas[i].advance(t);
            }
        }
        let r = &self.replicas;
        let pick = match self.config.router.policy {
            Router::RoundRobin => {
                self.rr = self.rr.wrapping_add(1);
                candidates[self.rr % candidates.len()]
            }
            Router::Random => candidates[self.route.integer(0, candidates.len() as u32 - 1) as usize],
            Router::LeastOutstanding => *candidates.iter().min_by_key(|&&i| r[i].outstanding()).unwrap_or(&first),
            Router::LeastWaiting => *candidates
                .iter()
                .min_by_key(|&&i| (r[i].sim.num_requests_waiting(), r[i].sim.num_requests_running()))
                .unwrap_or(&first),
            Router::PowerOfTwo => {
                let n = candidates.len() as u32 - 1;
                let a = candidates[self.route.integer(0, n) as usize];
                let b = candidates[self.route.integer(0, n) as usize];
                if r[b].outstanding() < r[a].outstanding() { b } else { a }
            }
            Router::LeastKv => *candidates
                .iter()
                .min_by(|&&i, &&j| {
                    let key = |k: usize| (r[k].sim.kv_cache_usage(), r[k].outstanding());
                    key(i).partial_cmp(&key(j)).unwrap_or(std::cmp::Ordering::Equal)
                })
                .unwrap_or(&first),
        };
        let replica = &mut self.replicas[pick];
        replica.advance(t);
        replica.sim.push_arrival(t);
        self.arrived += 1;
        self.arrived_since += 1;
        Ok(())
    }

    /// Advances every live replica to `t` and collects what finished.
    fn collect(&mut self, t: f64) -> Result<Vec<f64>, ConfigError> {
        let mut ttfts = Vec::new();
        for r in self.replicas.iter_mut().filter(|r| r.released_s.is_none()) {
            r.advance(t);
            if let Some(e) = r.sim.error() {
                return Err(e.clone());
            }
            self.truncated |= r.sim.is_truncated();
            r.sim.take_finished(&mut self.finished);
        }
        for f in self.finished.drain(..) {
            self.completed += 1;
            if f.ttft_s <= self.slo.ttft_s && f.tpot_s <= self.slo.tpot_s {
                self.good += 1;
            }
            ttfts.push(f.ttft_s);
        }
        self.ttfts.extend_from_slice(&ttfts);
        Ok(ttfts)
    }

    fn scrape(&mut self, t: f64) -> Result<(), ConfigError> {
        let batch = self.collect(t)?;
        // Release drained replicas that have emptied.
        for r in self.replicas.iter_mut() {
            if r.draining && r.released_s.is_none() && r.sim.in_flight() == 0 {
                r.released_s = Some(t);
            }
        }
        let live = |r: &&Replica| r.released_s.is_none();
        let ready: Vec<&Replica> = self.replicas.iter().filter(|r| r.serving(t)).collect();
        let n = ready.len().max(1) as f64;
        let waiting: u32 = ready.iter().map(|r| r.sim.num_requests_waiting() as u32).sum();
        let waiting_max = ready.iter().map(|r| r.sim.num_requests_waiting() as u32).max().unwrap_or(0);
        let busy = ready.iter().filter(|r| r.sim.in_flight() > 0).count() as f64 / n;
        let kv = ready.iter().map(|r| r.sim.kv_cache_usage()).sum::<f64>() / n;
        let starting = self.replicas.iter().filter(live).filter(|r| r.ready_s > t).count() as u32;
        let draining = self.replicas.iter().filter(live).filter(|r| r.draining).count() as u32;
        let ready_n = ready.len() as u32;
        self.peak = self.peak.max(ready_n + starting + draining);
        let mut sorted = batch.clone();
        let p99 = p99(&mut sorted);
        let sample_s = self.config.run.sample_s;
        let keep = (self.config.autoscaler.window_s / sample_s).round().max(1.0) as usize;
        self.window.push_back(Scrape {
            ttfts: batch,
            waiting_per_replica: waiting as f64 / n,
            waiting_max,
            kv,
            busy,
            arrived: self.arrived_since,
            ready: ready_n,
        });
        while self.window.len() > keep {
            self.window.pop_front();
        }
        let signal = self.signal();
        let attainment = self.scrape_attainment();
        self.series.push(FleetPoint {
            t_s: t,
            offered_rps: self.config.traffic.rate_at(t, self.config.run.duration_s),
            arrived_rps: self.arrived_since as f64 / sample_s,
            ready: ready_n,
            starting,
            draining,
            capacity_rps: ready_n as f64 * self.capacity_rps,
            waiting,
            waiting_max,
            ttft_p99_s: p99,
            attainment,
            busy,
            kv_usage: kv,
            signal,
        });
        self.arrived_since = 0;
        if t + 1e-9 >= self.next_decision_s {
            self.next_decision_s += self.config.autoscaler.interval_s;
            self.decide(t, signal, ready_n + starting);
        }
        Ok(())
    }

    fn scrape_attainment(&mut self) -> f64 {
        let (good, completed) = (self.good, self.completed);
        let (g0, c0) = self.last_counts;
        self.last_counts = (good, completed);
        if completed == c0 { f64::NAN } else { (good - g0) as f64 / (completed - c0) as f64 }
    }
}

impl Fleet {
    /// The autoscaler's signal over the window (`NaN` when it has nothing to judge).
    fn signal(&self) -> f64 {
        let w = &self.window;
        let n = w.len().max(1) as f64;
        match self.config.autoscaler.signal {
            Signal::None => f64::NAN,
            Signal::WaitingMean => w.iter().map(|s| s.waiting_per_replica).sum::<f64>() / n,
            Signal::WaitingMax => w.iter().map(|s| s.waiting_max).max().unwrap_or(0) as f64,
            Signal::TtftP99 => {
                let mut all: Vec<f64> = w.iter().flat_map(|s| s.ttfts.iter().copied()).collect();
                p99(&mut all)
            }
            Signal::KvUsage => w.iter().map(|s| s.kv).sum::<f64>() / n,
            Signal::GpuUtil => w.iter().map(|s| s.busy).sum::<f64>() / n,
            Signal::Rate => {
                let arrived: u64 = w.iter().map(|s| s.arrived).sum();
                let rate = arrived as f64 / (n * self.config.run.sample_s);
                let ready = w.back().map_or(1, |s| s.ready).max(1);
                rate / (ready as f64 * self.capacity_rps)
            }
        }
    }

    /// Scales on `signal`, `current` counting the replicas starting.
    fn decide(&mut self, t: f64, signal: f64, current: u32) {
        let a = &self.config.autoscaler;
        if signal.is_nan() || t - self.last_change_s < a.cooldown_s {
            return;
        }
        let (up, down, cold, min, max) = (a.scale_up, a.scale_down, a.cold_start_s, a.min_replicas, a.max_replicas);
        if signal > up && current < max {
            let want = ((current as f64 * signal / up).ceil() as u32).clamp(current + 1, max);
            for _ in current..want {
                self.start_replica(t, cold);
                self.scale_ups += 1;
            }
            self.last_change_s = t;
        } else if signal < down && current > min {
            // Drain the serving replica with the least in it (the newest on a tie).
            let victim = (0..self.replicas.len())
                .filter(|&i| self.replicas[i].serving(t))
                .min_by_key(|&i| (self.replicas[i].outstanding(), usize::MAX - i));
            if let Some(i) = victim {
                self.replicas[i].draining = true;
                self.scale_downs += 1;
                self.last_change_s = t;
            }
        }
    }

    /// After the last arrival: every replica finishes what it holds (bounded by its work cap).
    fn finish(&mut self) -> Result<(), ConfigError> {
        self.collect(f64::INFINITY)?;
        self.done = true;
        Ok(())
    }

    /// The run's totals and series (so far, if it is not over).
    pub fn result(&self) -> FleetResult {
        let end = self.config.run.duration_s;
        let gpu_hours: f64 =
            self.replicas.iter().map(|r| (r.released_s.unwrap_or(end).min(end) - r.started_s).max(0.0) / 3_600.0).sum();
        let cost_usd = gpu_hours * self.config.run.gpu_hour_usd;
        let mut ttfts = self.ttfts.clone();
        let completed = self.completed.max(1) as f64;
        FleetResult {
            series: self.series.clone(),
            totals: FleetTotals {
                requests: self.arrived,
                completed: self.completed,
                good: self.good,
                attainment: self.good as f64 / completed,
                goodput_rps: self.good as f64 / end,
                ttft_mean_s: ttfts.iter().sum::<f64>() / completed,
                ttft_p99_s: p99(&mut ttfts),
                gpu_hours,
                cost_usd,
                cost_per_1k_good_usd: if self.good == 0 { f64::INFINITY } else { cost_usd * 1e3 / self.good as f64 },
                peak_replicas: self.peak,
                scale_ups: self.scale_ups,
                scale_downs: self.scale_downs,
                replica_capacity_rps: self.capacity_rps,
                truncated: self.truncated,
            },
        }
    }
}

/// The 99th percentile (nearest rank) of `values`, reordering them; `NaN` when empty.
fn p99(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let k = ((values.len() as f64 * 0.99).ceil() as usize).clamp(1, values.len()) - 1;
    *values.select_nth_unstable_by(k, f64::total_cmp).1
}

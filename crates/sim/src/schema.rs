//! The lesson's scenarios and the page's settings, stated once.
//!
//! Everything a page or a test needs to know about the lab's settings lives here: the workloads
//! with their labels and SLOs, the GPU presets with their labels, the baseline engine, the
//! choices each control offers, the load grid the sweeps run over, and the state a lab starts
//! from. The page reads [`schema`] (the build writes it out as `www/pkg/kneelab_schema.js`, an ES
//! module the page imports without waiting for the wasm; the wasm uses the same constants);
//! `tests/lesson.rs` builds its configs
//! with [`lesson_config`], so the lesson's claims are checked under the settings the reader
//! sees.

use serde::Serialize;

use crate::config::{
    Config, CostConfig, EngineConfig, KneeRule, LoadConfig, RunConfig, SloConfig, WorkloadConfig, WorkloadPreset,
};
use crate::cost;
use crate::settings::{self, LOAD_MAX, LOAD_MIN, Setting};
use crate::sweep::DEFAULT_ATTAINMENT_TARGET;

/// A workload as the lesson uses it: a preset, what to call it, and the SLOs that make sense
/// for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Workload {
    /// The preset's name in configs (`workload.preset`).
    pub name: &'static str,
    /// The preset.
    pub preset: WorkloadPreset,
    /// What the page calls it.
    pub label: &'static str,
    /// Time to first token a user of this workload accepts.
    pub slo_ttft_ms: f64,
    /// Time per output token a user of this workload accepts.
    pub slo_tpot_ms: f64,
}

/// Chat: a person waits for the answer to start, then reads it as it streams.
pub const CHAT: Workload =
    Workload { name: "chat", preset: WorkloadPreset::Chat, label: "Chat", slo_ttft_ms: 500.0, slo_tpot_ms: 50.0 };

/// RAG: thousands of retrieved tokens in, a short answer out.
pub const RAG: Workload =
    Workload { name: "rag", preset: WorkloadPreset::Rag, label: "RAG", slo_ttft_ms: 2000.0, slo_tpot_ms: 200.0 };

/// ShareGPT-like conversations (`vllm bench`'s default dataset), judged by chat's SLOs; the
/// CLI's, not offered on the page.
#[cfg(feature = "empirical")]
pub const SHAREGPT: Workload = Workload {
    name: "sharegpt",
    preset: WorkloadPreset::Sharegpt,
    label: "ShareGPT-like",
    slo_ttft_ms: CHAT.slo_ttft_ms,
    slo_tpot_ms: CHAT.slo_tpot_ms,
};

/// Every workload the page offers, in the order it lists them.
pub const WORKLOADS: [Workload; 2] = [CHAT, RAG];

/// The lesson's workload for a preset.
pub fn workload(preset: WorkloadPreset) -> &'static Workload {
    match preset {
        WorkloadPreset::Chat => &CHAT,
        WorkloadPreset::Rag => &RAG,
        #[cfg(feature = "empirical")]
        WorkloadPreset::Sharegpt => &SHAREGPT,
    }
}

/// A workload as the page lists it: the lesson's, with its preset's mean lengths.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadInfo {
    /// The preset's name in configs (`workload.preset`).
    pub name: &'static str,
    /// What the page calls it.
    pub label: &'static str,
    /// Mean prompt length of the preset, in tokens.
    pub prompt_mean_tokens: f64,
    /// Mean output length of the preset, in tokens.
    pub output_mean_tokens: f64,
    /// Its TTFT SLO.
    pub slo_ttft_ms: f64,
    /// Its TPOT SLO.
    pub slo_tpot_ms: f64,
}

impl WorkloadInfo {
    fn of(w: Workload) -> Self {
        let means = crate::scenario::workload_preset(w.preset).map(|(p, o)| (p.mean, o.mean));
        let (prompt, output) = means.unwrap_or_default();
        WorkloadInfo {
            name: w.name,
            label: w.label,
            prompt_mean_tokens: prompt.unwrap_or(f64::NAN),
            output_mean_tokens: output.unwrap_or(f64::NAN),
            slo_ttft_ms: w.slo_ttft_ms,
            slo_tpot_ms: w.slo_tpot_ms,
        }
    }
}

/// A GPU preset as the page lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Preset {
    /// The name in configs (`cost.preset`).
    pub name: &'static str,
    /// What the page calls it.
    pub label: String,
    /// The model, as vLLM's metrics label it (`model_name`).
    pub model: &'static str,
    /// The GPU as people say it.
    pub gpu: &'static str,
    /// Where the preset's numbers come from.
    pub source: &'static str,
    /// The vLLM version whose overheads the preset stands for.
    pub vllm: &'static str,
    /// `vllm serve`'s default `--max-num-seqs` on this GPU class in V1.
    pub v1_default_max_num_seqs: u32,
    /// `vllm serve`'s default `--max-num-batched-tokens` there.
    pub v1_default_max_num_batched_tokens: u32,
}

/// The model every preset runs.
pub const MODEL: &str = "meta-llama/Meta-Llama-3-8B-Instruct";

/// What the page calls that model.
pub const MODEL_LABEL: &str = "Llama-3-8B";

/// vLLM's `max_model_len` for these presets: the step budget when chunked prefill is off.
pub const MAX_MODEL_LEN: u32 = 8192;

/// What each control offers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Options {
    /// `--max-num-seqs` choices.
    pub max_num_seqs: &'static [u32],
    /// `--max-num-batched-tokens` choices (with chunked prefill on).
    pub max_num_batched_tokens: &'static [u32],
    /// KV cache sizes in tokens: an 80 GB card holds about 440k of Llama-3-8B; less is what a
    /// smaller card, a bigger model or a lower `--gpu-memory-utilization` leaves.
    pub kv_cache_tokens: &'static [u64],
    /// How each KV cache size reads, in `kv_cache_tokens`' order ("440k (80 GB card)").
    pub kv_cache_labels: Vec<String>,
    /// What the SLO knee can be judged on, by `slo.knee` value.
    pub knee_rules: Vec<Choice>,
    /// The open loop's `load.burstiness` choices (gamma shape of the gaps between arrivals, as
    /// `vllm bench serve --burstiness`), each labelled with its gaps' coefficient of variation.
    pub burstiness: Vec<Burstiness>,
}

/// One `load.burstiness` choice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Burstiness {
    /// The gamma shape k.
    pub shape: f64,
    /// What the control says: the shape and the gaps' CV, `1 / sqrt(k)`.
    pub label: String,
}

/// The burstiness choices: burstier than Poisson (k < 1), Poisson, and smoother.
pub const BURSTINESS: [f64; 7] = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0];

/// One choice of a select: its value and what the control says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Choice {
    /// The config value.
    pub value: &'static str,
    /// What the control says.
    pub label: String,
}

/// The offered-load slider's range, as fractions of capacity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LoadRange {
    /// Lowest.
    pub min: f64,
    /// Highest.
    pub max: f64,
    /// Step.
    pub step: f64,
}

/// The state a lab starts from, in the lab's own terms (the page keys it in camelCase).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Defaults {
    /// Offered load, a fraction of capacity.
    pub load: f64,
    /// `open` or `closed`.
    pub mode: &'static str,
    /// Workload name.
    pub workload: &'static str,
    /// GPU preset name.
    pub preset: &'static str,
    /// `--max-num-seqs`.
    pub max_num_seqs: u32,
    /// `--enable-chunked-prefill`.
    pub chunked_prefill: bool,
    /// `--max-num-batched-tokens`.
    pub max_num_batched_tokens: u32,
    /// TTFT SLO (the default workload's).
    pub slo_ttft_ms: f64,
    /// TPOT SLO (the default workload's).
    pub slo_tpot_ms: f64,
    /// Open loop: the gamma shape of the gaps between arrivals (1 = Poisson).
    pub burstiness: f64,
    /// Closed loop: mean think time between a user's requests.
    pub think_time_s: f64,
    /// KV cache size in tokens.
    pub kv_cache_tokens: u64,
    /// Requests per simulated run: more is smoother but slower; kept where dragging stays fluid.
    pub requests: u32,
    /// Random seed.
    pub seed: u64,
    /// `attainment` or `p99`.
    pub knee_rule: &'static str,
    /// `linear` or `log`.
    pub latency_scale: &'static str,
}

/// How a readout's value reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A duration in seconds.
    Seconds,
    /// A duration in milliseconds (as the config states SLOs), written as seconds are.
    Milliseconds,
    /// Requests per second.
    Rate,
    /// A fraction, shown as a percentage.
    Percent,
    /// A whole number of things.
    Count,
    /// A time-averaged number of things (one decimal below 10).
    MeanCount,
    /// A ratio of two values, shown with "×".
    Ratio,
    /// Tokens per second.
    TokensPerSecond,
    /// 1 or 0.
    Flag,
}

/// One of the lab's live numbers: its name (the key in `readouts`, a `data-metric` name), how
/// it reads, and the label the readouts panel gives it (`None`: not offered there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Readout {
    /// The name.
    pub name: &'static str,
    /// How its value reads.
    pub unit: Unit,
    /// The readouts panel's label, if the panel offers it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<&'static str>,
}

const fn readout(name: &'static str, unit: Unit, label: Option<&'static str>) -> Readout {
    Readout { name, unit, label }
}

/// Every readout a lab reports, once; the panel offers the labelled ones in this order.
pub const READOUTS: &[Readout] = &[
    readout("ttft_p50", Unit::Seconds, Some("TTFT p50")),
    readout("ttft_p99", Unit::Seconds, Some("TTFT p99")),
    readout("tpot_p99", Unit::Seconds, Some("TPOT p99")),
    readout("e2e_p99", Unit::Seconds, Some("E2E p99")),
    readout("throughput_rps", Unit::Rate, Some("Throughput")),
    readout("goodput_rps", Unit::Rate, Some("Goodput")),
    readout("slo_attainment", Unit::Percent, Some("Met both SLOs")),
    readout("num_requests_running", Unit::MeanCount, Some("num_requests_running")),
    readout("num_requests_waiting", Unit::MeanCount, Some("num_requests_waiting")),
    readout("capacity_rps", Unit::Rate, Some("Capacity")),
    readout("ttft_mean", Unit::Seconds, Some("TTFT mean")),
    readout("ttft_p90", Unit::Seconds, Some("TTFT p90")),
    readout("tpot_p50", Unit::Seconds, Some("TPOT p50")),
    readout("itl_p99", Unit::Seconds, Some("ITL p99")),
    readout("e2e_mean", Unit::Seconds, Some("E2E mean")),
    readout("queue_p99", Unit::Seconds, Some("Queue wait p99")),
    readout("output_tokens_per_s", Unit::TokensPerSecond, Some("Output tokens/s")),
    readout("kv_cache_usage", Unit::Percent, Some("KV cache used")),
    readout("ttft_p99_over_p50", Unit::Ratio, Some("TTFT p99 / p50")),
    readout("num_preemptions", Unit::Count, Some("Preemptions")),
    readout("users", Unit::Count, Some("Users")),
    readout("offered_rps", Unit::Rate, Some("Offered rate")),
    readout("arrival_rate_rps", Unit::Rate, Some("Arrivals drawn")),
    readout("knee_load", Unit::Percent, Some("Knee")),
    readout("knee_rps", Unit::Rate, Some("Throughput at the knee")),
    readout("saturation_rps", Unit::Rate, Some("Saturation throughput")),
    readout("distserve_goodput_rps", Unit::Rate, Some("DistServe goodput")),
    readout("littles_l", Unit::MeanCount, Some("L (in flight)")),
    readout("littles_w_s", Unit::Seconds, Some("W (mean E2E)")),
    readout("littles_batch_l", Unit::MeanCount, Some("L (running)")),
    readout("littles_batch_w_s", Unit::Seconds, Some("W (time in the batch)")),
    readout("batch_mean", Unit::Seconds, Some("Time in the batch")),
    readout("littles_lambda_rps", Unit::Rate, Some("λ (completions/s)")),
    readout("base_latency_s", Unit::Seconds, Some("Unloaded latency")),
    readout("open_same_ttft_p99", Unit::Seconds, Some("Open loop TTFT p99, same throughput")),
    readout("open_same_ttft_p50", Unit::Seconds, Some("Open loop TTFT p50, same throughput")),
    readout("open_same_rps", Unit::Rate, Some("Open loop rate, same throughput")),
    readout("queue_p50", Unit::Seconds, Some("Queue wait p50")),
    readout("queue_mean", Unit::Seconds, Some("Queue wait mean")),
    readout("tpot_mean", Unit::Seconds, Some("TPOT mean")),
    readout("itl_p50", Unit::Seconds, Some("ITL p50")),
    readout("num_requests_running_now", Unit::Count, Some("Running at scrape")),
    readout("num_requests_waiting_now", Unit::Count, Some("Waiting at scrape")),
    readout("attainment_target", Unit::Percent, None),
    readout("batch_p50", Unit::Seconds, None),
    readout("batch_p90", Unit::Seconds, None),
    readout("batch_p99", Unit::Seconds, None),
    readout("decode_step_s", Unit::Seconds, None),
    readout("duration_s", Unit::Seconds, None),
    readout("e2e_p50", Unit::Seconds, None),
    readout("e2e_p90", Unit::Seconds, None),
    readout("itl_mean", Unit::Seconds, None),
    readout("itl_p90", Unit::Seconds, None),
    readout("knee_batch_s", Unit::Seconds, None),
    readout("knee_beyond_sweep", Unit::Flag, None),
    readout("knee_e2e_s", Unit::Seconds, None),
    readout("knee_goodput_rps", Unit::Rate, None),
    readout("knee_running", Unit::MeanCount, None),
    readout("knee_slo_attainment", Unit::Percent, None),
    readout("knee_tpot_p99_s", Unit::Seconds, None),
    readout("knee_ttft_p99_s", Unit::Seconds, None),
    readout("limit_kv_cache_rps", Unit::Rate, None),
    readout("limit_prefill_rps", Unit::Rate, None),
    readout("limit_prefill_tokens_per_s", Unit::TokensPerSecond, None),
    readout("limit_rps", Unit::Rate, None),
    readout("limit_seq_cap_batch_s", Unit::Seconds, None),
    readout("limit_seq_cap_rps", Unit::Rate, None),
    readout("littles_batch_rel_error", Unit::Percent, None),
    readout("littles_rel_error", Unit::Percent, None),
    readout("load", Unit::Percent, None),
    readout("offered_load", Unit::Percent, None),
    readout("prefill_step_s", Unit::Seconds, None),
    readout("prefill_step_share", Unit::Percent, None),
    readout("queue_p90", Unit::Seconds, None),
    readout("requests_completed", Unit::Count, None),
    readout("saturation_batch_s", Unit::Seconds, None),
    readout("saturation_e2e_s", Unit::Seconds, None),
    readout("saturation_load", Unit::Percent, None),
    readout("saturation_running", Unit::MeanCount, None),
    readout("slo_tpot_s", Unit::Seconds, None),
    readout("slo_ttft_s", Unit::Seconds, None),
    readout("sweep_points", Unit::Count, None),
    readout("timeline_first_id", Unit::Count, None),
    readout("timeline_wait_mean_s", Unit::Seconds, None),
    readout("tpot_p90", Unit::Seconds, None),
    readout("tpot_p99_crossing_load", Unit::Percent, None),
    readout("truncated", Unit::Flag, None),
    readout("ttft_p99_crossing_load", Unit::Percent, None),
    readout("waiting_window_first_half", Unit::MeanCount, None),
    readout("waiting_window_max", Unit::Count, None),
    readout("waiting_window_mean", Unit::MeanCount, None),
    readout("waiting_window_s", Unit::Seconds, None),
    readout("waiting_window_second_half", Unit::MeanCount, None),
];

/// The readouts a lab shows when its `metrics` attribute is absent.
pub const DEFAULT_METRICS: usize = 10;

/// How a readout reads: its registered unit; a name outside the registry (a lesson's own
/// number) reads by its suffix (`_rps` a rate; `_s`, `_mean`, `_p50`, `_p90`, `_p99` a duration).
pub fn unit_of(name: &str) -> Option<Unit> {
    READOUTS.iter().find(|r| r.name == name).map(|r| r.unit).or_else(|| {
        if name.ends_with("_rps") {
            Some(Unit::Rate)
        } else if name.ends_with("_ms") {
            Some(Unit::Milliseconds)
        } else if ["_s", "_mean", "_p50", "_p90", "_p99"].iter().any(|suffix| name.ends_with(suffix)) {
            Some(Unit::Seconds)
        } else {
            None
        }
    })
}

/// Everything the page needs to know about settings, exported once.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Schema {
    /// The workloads, in the order the page lists them.
    pub workloads: Vec<WorkloadInfo>,
    /// The GPU presets.
    pub presets: Vec<Preset>,
    /// What the page calls the model every preset runs.
    pub model_label: &'static str,
    /// The lesson's baseline engine (the lab's defaults).
    pub engine: EngineConfig,
    /// vLLM's `max_model_len` for the presets.
    pub max_model_len: u32,
    /// The choices each control offers.
    pub options: Options,
    /// The offered-load slider's range.
    pub load_range: LoadRange,
    /// The load grid every sweep runs over (fractions of capacity).
    pub loads: Vec<f64>,
    /// The two loads the lesson compares: just below the knee, and capacity.
    pub compare_loads: [f64; 2],
    /// What the lesson's own sections compare, beyond a lab's controls.
    pub lesson: Lesson,
    /// The share of requests that must meet both SLOs at the attainment knee.
    pub attainment_target: f64,
    /// The state a lab starts from.
    pub defaults: Defaults,
    /// Every readout a lab reports: name, unit, label.
    pub readouts: &'static [Readout],
    /// How many of the labelled readouts, in order, a lab shows by default.
    pub default_metrics: usize,
    /// The charts a lab can show (its `panels`), in the order it shows them.
    pub panels: [&'static str; 8],
    /// The charts a lab shows when none are asked for.
    pub default_panels: [&'static str; 3],
    /// The replica player: its speeds and the iterations it traces.
    pub replica: ReplicaPlayer,
    /// Every setting of a lab: its Config path, attribute alias, state key, kind and control.
    pub settings: Vec<Setting>,
}

/// What the lesson's sections compare beyond a lab's controls: the goodput section's SLO
/// sliders, the load past the knee it reads, and the knobs table's columns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lesson {
    /// The TTFT SLO slider's stops, in ms (log-spaced; each workload's SLO is one).
    pub slo_ttft_stops_ms: &'static [f64],
    /// The TPOT SLO slider's stops, in ms.
    pub slo_tpot_stops_ms: &'static [f64],
    /// A load past the knee, as a fraction of capacity, where throughput still holds and goodput
    /// has collapsed.
    pub overload: f64,
    /// The knobs table: the baseline engine, and one knob changed from it per column.
    pub knob_columns: Vec<KnobColumn>,
}

/// A column of the knobs table: an engine, named by what differs from the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KnobColumn {
    /// The column's key (`base` for the baseline).
    pub id: &'static str,
    /// Its heading.
    pub label: String,
    /// The whole engine it sweeps.
    pub engine: EngineConfig,
}

/// The TTFT SLO slider's stops, in ms.
pub const SLO_TTFT_STOPS_MS: [f64; 12] =
    [100.0, 250.0, 500.0, 750.0, 1000.0, 1500.0, 2000.0, 3000.0, 5000.0, 7500.0, 10_000.0, 20_000.0];
/// The TPOT SLO slider's stops, in ms.
pub const SLO_TPOT_STOPS_MS: [f64; 9] = [10.0, 20.0, 30.0, 50.0, 75.0, 100.0, 200.0, 300.0, 500.0];
/// The load past the knee the lesson reads goodput at.
pub const OVERLOAD: f64 = 1.1;

/// The knobs table's columns: a small batch cap, the baseline, chunked prefill off (the step
/// budget is then `max_model_len`, as in vLLM), a small token budget, and a small KV cache.
fn knob_columns(base: &EngineConfig) -> Vec<KnobColumn> {
    let seqs = base.max_num_seqs;
    let small_seqs = EngineConfig { max_num_seqs: 8, ..base.clone() };
    let small_budget = EngineConfig { max_num_batched_tokens: 512, ..base.clone() };
    let small_kv = EngineConfig { kv_cache_tokens: 100_000, ..base.clone() };
    let unchunked = EngineConfig { chunked_prefill: false, max_num_batched_tokens: MAX_MODEL_LEN, ..base.clone() };
    vec![
        KnobColumn { id: "seqs", label: format!("--max-num-seqs {}", small_seqs.max_num_seqs), engine: small_seqs },
        KnobColumn { id: "base", label: format!("Baseline: {seqs}"), engine: base.clone() },
        KnobColumn { id: "nochunk", label: format!("{seqs}, chunked prefill off"), engine: unchunked },
        KnobColumn {
            id: "budget",
            label: format!("{seqs}, budget {}", small_budget.max_num_batched_tokens),
            engine: small_budget,
        },
        KnobColumn {
            id: "kv",
            label: format!("{seqs}, KV cache for {}k tokens", small_kv.kv_cache_tokens / 1000),
            engine: small_kv,
        },
    ]
}

/// The replica player's settings (the `replica` panel).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplicaPlayer {
    /// The panel it plays (drawn by the player, not by the lab's `draw`).
    pub panel: &'static str,
    /// Speeds offered, in simulated seconds per real second.
    pub speeds: &'static [f64],
    /// The speed it starts at.
    pub speed: f64,
    /// Engine iterations traced, from the start of the run.
    pub steps: u32,
}

/// The replica player's speeds (simulated s per real s): a 15 ms step lasts 1.5 s at the slowest.
pub const REPLICA_SPEEDS: [f64; 6] = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0];

/// Engine iterations the replica player traces at a time (a window of the run; it traces the
/// next window when play or the scrubber leaves this one).
pub const REPLICA_STEPS: u32 = 500;

/// Bins of the player's queue strip: the most requests waiting in each stretch of the run.
pub const REPLICA_HISTORY_BINS: usize = 600;

/// The panel the replica player draws, step by step (one of [`PANELS`]).
pub const PLAYER_PANEL: &str = "replica";

/// The charts a lab can show, by the name its `panels` attribute and its wasm `draw` use.
pub const PANELS: [&str; 8] = ["latency", "throughput", "queue", "timeline", "goodput", "limits", "tail", "replica"];

/// The charts a lab shows when none are asked for.
pub const DEFAULT_PANELS: [&str; 3] = ["latency", "throughput", "queue"];

/// The two loads the lesson compares: just below the knee, and capacity.
pub const COMPARE_LOADS: [f64; 2] = [0.85, 1.0];

/// The offered load a lab starts at.
pub const DEFAULT_LOAD: f64 = COMPARE_LOADS[0];

/// The load grid: a sweep's default ([`crate::sweep::DEFAULT_GRID`], 5% to 120% of capacity,
/// every 5%), so the lab and `kneelab sweep` draw the same curve.
pub fn loads() -> Vec<f64> {
    crate::sweep::default_loads()
}

/// The requests a lab's run simulates by default.
pub const DEFAULT_REQUESTS: u32 = 4000;

/// The default workload: RAG, where prefill binds and the knee is easy to see.
pub const DEFAULT_WORKLOAD: Workload = RAG;

/// The page's schema.
pub fn schema() -> Schema {
    let engine = EngineConfig::default();
    let pct = (DEFAULT_ATTAINMENT_TARGET * 100.0).round();
    const KV_CACHE_TOKENS: &[u64] = &[50_000, 100_000, 200_000, 440_000];
    let options = Options {
        max_num_seqs: &[8, 16, 32, 64, 128, 256],
        max_num_batched_tokens: &[256, 512, 1024, 2048, 4096, 8192],
        kv_cache_tokens: KV_CACHE_TOKENS,
        kv_cache_labels: KV_CACHE_TOKENS
            .iter()
            .map(|&k| {
                let card = if k == engine.kv_cache_tokens { " (80 GB card)" } else { "" };
                format!("{}k{card}", k / 1000)
            })
            .collect(),
        burstiness: BURSTINESS
            .iter()
            .map(|&shape| Burstiness { shape, label: format!("{shape} (CV {:.2})", 1.0 / shape.sqrt()) })
            .collect(),
        knee_rules: vec![
            Choice { value: "attainment", label: format!("{pct}% meet both SLOs") },
            Choice { value: "p99", label: "both p99s meet the SLOs".to_string() },
        ],
    };
    let settings = settings::settings(
        WORKLOADS.iter().map(|w| w.name).collect(),
        cost::PRESETS.iter().map(|p| p.name).collect(),
        options.knee_rules.iter().map(|c| c.value).collect(),
    );
    Schema {
        workloads: WORKLOADS.into_iter().map(WorkloadInfo::of).collect(),
        presets: cost::PRESETS
            .iter()
            .map(|p| Preset {
                name: p.name,
                // The model is the control's label ("GPU (Llama-3-8B)"): every preset runs it.
                label: format!("{} · {}", p.gpu, p.vllm),
                model: MODEL,
                gpu: p.gpu,
                source: p.source,
                vllm: p.vllm,
                v1_default_max_num_seqs: p.v1_default_max_num_seqs,
                v1_default_max_num_batched_tokens: p.v1_default_max_num_batched_tokens,
            })
            .collect(),
        model_label: MODEL_LABEL,
        max_model_len: MAX_MODEL_LEN,
        options,
        load_range: LoadRange { min: LOAD_MIN, max: LOAD_MAX, step: 0.01 },
        loads: loads(),
        compare_loads: COMPARE_LOADS,
        lesson: Lesson {
            slo_ttft_stops_ms: &SLO_TTFT_STOPS_MS,
            slo_tpot_stops_ms: &SLO_TPOT_STOPS_MS,
            overload: OVERLOAD,
            knob_columns: knob_columns(&engine),
        },
        attainment_target: DEFAULT_ATTAINMENT_TARGET,
        defaults: Defaults {
            load: DEFAULT_LOAD,
            mode: "open",
            workload: DEFAULT_WORKLOAD.name,
            preset: cost::PRESETS[0].name,
            max_num_seqs: engine.max_num_seqs,
            chunked_prefill: engine.chunked_prefill,
            max_num_batched_tokens: engine.max_num_batched_tokens,
            slo_ttft_ms: DEFAULT_WORKLOAD.slo_ttft_ms,
            slo_tpot_ms: DEFAULT_WORKLOAD.slo_tpot_ms,
            burstiness: 1.0,
            think_time_s: 10.0,
            kv_cache_tokens: engine.kv_cache_tokens,
            requests: DEFAULT_REQUESTS,
            seed: Config::default().seed,
            knee_rule: "attainment",
            latency_scale: "linear",
        },
        engine,
        readouts: READOUTS,
        default_metrics: DEFAULT_METRICS,
        panels: PANELS,
        default_panels: DEFAULT_PANELS,
        replica: ReplicaPlayer {
            panel: PLAYER_PANEL,
            speeds: &REPLICA_SPEEDS,
            speed: REPLICA_SPEEDS[1],
            steps: REPLICA_STEPS,
        },
        settings,
    }
}

/// The config a lesson lab runs for `workload` under `load`: the baseline engine on the default
/// GPU, the workload's SLOs, `requests` requests of which the config's default warm-up
/// ([`RunConfig::warmup`]) is left out.
pub fn lesson_config(workload: WorkloadPreset, load: LoadConfig, requests: u32) -> Config {
    let w = self::workload(workload);
    Config {
        engine: EngineConfig::default(),
        cost: CostConfig::roofline(cost::PRESETS[0].name),
        workload: WorkloadConfig::preset(w.preset),
        load,
        slo: SloConfig { ttft_ms: w.slo_ttft_ms, tpot_ms: w.slo_tpot_ms, knee: KneeRule::default() },
        run: RunConfig { requests, warmup_requests: None },
        ..Config::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workload_has_its_presets_means() {
        let s = schema();
        let means: Vec<_> = s.workloads.iter().map(|w| (w.name, w.prompt_mean_tokens, w.output_mean_tokens)).collect();
        assert_eq!(means, [("chat", 256.0, 256.0), ("rag", 3000.0, 100.0)]);
        for w in WORKLOADS {
            assert_eq!(workload(w.preset), &w);
        }
    }

    #[test]
    fn defaults_are_the_configs_defaults() {
        let s = schema();
        assert_eq!(s.defaults.max_num_seqs, s.engine.max_num_seqs);
        assert!(s.options.max_num_seqs.contains(&s.defaults.max_num_seqs));
        assert!(s.options.max_num_batched_tokens.contains(&s.defaults.max_num_batched_tokens));
        assert!(s.options.kv_cache_tokens.contains(&s.defaults.kv_cache_tokens));
        assert_eq!(s.options.kv_cache_labels, ["50k", "100k", "200k", "440k (80 GB card)"]);
        assert!(s.presets.iter().any(|p| p.name == s.defaults.preset));
        assert!(s.loads.iter().all(|&l| l > s.load_range.min && l <= s.load_range.max));
        assert_eq!(s.loads.len(), 24);
        assert_eq!(s.loads[16], 0.85);
        assert_eq!(s.options.knee_rules[0].label, "90% meet both SLOs");
    }

    #[test]
    fn readouts_are_named_once_and_the_default_ones_are_labelled() {
        let mut names: Vec<_> = READOUTS.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), READOUTS.len(), "a readout is registered twice");
        assert!(READOUTS[..DEFAULT_METRICS].iter().all(|r| r.label.is_some()));
        // The suffix says the unit where there is one.
        for r in READOUTS {
            if r.name.ends_with("_rps") {
                assert_eq!(r.unit, Unit::Rate, "{}", r.name);
            }
        }
    }

    #[test]
    fn a_name_reads_by_its_registered_unit_else_by_its_suffix() {
        assert_eq!(unit_of("kv_cache_usage"), Some(Unit::Percent));
        assert_eq!(unit_of("num_preemptions"), Some(Unit::Count));
        assert_eq!(unit_of("knee_rps"), Some(Unit::Rate));
        assert_eq!(unit_of("lesson_batch_s"), Some(Unit::Seconds));
        assert_eq!(unit_of("lesson_p99"), Some(Unit::Seconds));
        assert_eq!(unit_of("slo_ttft_ms"), Some(Unit::Milliseconds));
        assert_eq!(unit_of("users"), Some(Unit::Count));
        assert_eq!(unit_of("a_lesson_label"), None);
    }

    #[test]
    fn each_workloads_slos_are_stops_of_the_slo_sliders() {
        for w in WORKLOADS {
            assert!(SLO_TTFT_STOPS_MS.contains(&w.slo_ttft_ms), "{}", w.name);
            assert!(SLO_TPOT_STOPS_MS.contains(&w.slo_tpot_ms), "{}", w.name);
        }
        for stops in [&SLO_TTFT_STOPS_MS[..], &SLO_TPOT_STOPS_MS[..]] {
            assert!(stops.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn each_knob_column_changes_one_knob_from_the_baseline() {
        let s = schema();
        let base = &s.engine;
        let cols = &s.lesson.knob_columns;
        assert_eq!(cols.iter().filter(|c| c.engine == *base).count(), 1);
        for c in cols {
            let e = &c.engine;
            let changed = [
                e.max_num_seqs != base.max_num_seqs,
                // Chunked prefill off carries its budget with it: vLLM's is then max_model_len.
                e.chunked_prefill != base.chunked_prefill
                    || (e.chunked_prefill && e.max_num_batched_tokens != base.max_num_batched_tokens),
                e.kv_cache_tokens != base.kv_cache_tokens,
                e.block_size_tokens != base.block_size_tokens,
            ];
            assert!(changed.iter().filter(|&&x| x).count() <= 1, "{}", c.id);
            if !e.chunked_prefill {
                assert_eq!(e.max_num_batched_tokens, MAX_MODEL_LEN, "{}", c.id);
            }
        }
        assert_eq!(cols[4].label, "64, KV cache for 100k tokens");
        assert!(s.loads.contains(&s.lesson.overload));
    }

    #[test]
    fn the_lesson_config_is_valid_and_carries_the_workloads_slos() {
        let c = lesson_config(WorkloadPreset::Rag, LoadConfig::open_offered(0.85), 4000);
        assert_eq!((c.slo.ttft_ms, c.slo.tpot_ms), (2000.0, 200.0));
        assert_eq!(c.run.warmup(), 400);
        crate::prepare_scenario(&c).expect("the lesson's config is valid");
    }
}

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
    /// Why those SLOs.
    pub why: &'static str,
}

/// Chat: a person waits for the answer to start, then reads it as it streams.
pub const CHAT: Workload = Workload {
    name: "chat",
    preset: WorkloadPreset::Chat,
    label: "Chat",
    slo_ttft_ms: 500.0,
    slo_tpot_ms: 50.0,
    why: "a person watches the answer start and reads it as it streams",
};

/// RAG: thousands of retrieved tokens in, a short answer out.
pub const RAG: Workload = Workload {
    name: "rag",
    preset: WorkloadPreset::Rag,
    label: "RAG",
    slo_ttft_ms: 2000.0,
    slo_tpot_ms: 200.0,
    why: "a long prompt takes time to read, and five tokens a second is reading pace",
};

/// Every workload the page offers, in the order it lists them.
pub const WORKLOADS: [Workload; 2] = [CHAT, RAG];

/// The lesson's workload for a preset.
pub fn workload(preset: WorkloadPreset) -> &'static Workload {
    match preset {
        WorkloadPreset::Chat => &WORKLOADS[0],
        WorkloadPreset::Rag => &WORKLOADS[1],
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
    /// Why those SLOs.
    pub why: &'static str,
}

impl WorkloadInfo {
    fn of(w: Workload) -> Self {
        let (prompt, output) = crate::scenario::workload_preset(w.preset);
        WorkloadInfo {
            name: w.name,
            label: w.label,
            prompt_mean_tokens: prompt.mean.unwrap_or(f64::NAN),
            output_mean_tokens: output.mean.unwrap_or(f64::NAN),
            slo_ttft_ms: w.slo_ttft_ms,
            slo_tpot_ms: w.slo_tpot_ms,
            why: w.why,
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
    /// `vllm serve`'s default `--max-num-seqs` on this GPU class in V1.
    pub v1_default_max_num_seqs: u32,
    /// `vllm serve`'s default `--max-num-batched-tokens` there.
    pub v1_default_max_num_batched_tokens: u32,
}

/// The model every preset runs.
pub const MODEL: &str = "meta-llama/Meta-Llama-3-8B-Instruct";

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
    /// What the SLO knee can be judged on, by `slo.knee` value.
    pub knee_rules: Vec<Choice>,
}

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

/// Everything the page needs to know about settings, exported once.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Schema {
    /// The workloads, in the order the page lists them.
    pub workloads: Vec<WorkloadInfo>,
    /// The GPU presets.
    pub presets: Vec<Preset>,
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
    /// The share of requests that must meet both SLOs at the attainment knee.
    pub attainment_target: f64,
    /// Warm-up: this fraction of a run's requests is left out of its statistics.
    pub warmup_fraction: f64,
    /// The state a lab starts from.
    pub defaults: Defaults,
}

/// The two loads the lesson compares: just below the knee, and capacity.
pub const COMPARE_LOADS: [f64; 2] = [0.85, 1.0];

/// The offered load a lab starts at.
pub const DEFAULT_LOAD: f64 = COMPARE_LOADS[0];

/// The load grid: 5% to 120% of capacity, every 5%.
pub fn loads() -> Vec<f64> {
    (1..=24).map(|i| (f64::from(i) * 0.05 * 1e9).round() / 1e9).collect()
}

/// The share of a run's requests left out as warm-up.
pub const WARMUP_FRACTION: f64 = 0.1;

/// The requests a lab's run simulates by default.
pub const DEFAULT_REQUESTS: u32 = 4000;

/// The default workload: RAG, where prefill binds and the knee is easy to see.
pub const DEFAULT_WORKLOAD: Workload = RAG;

/// The page's schema.
pub fn schema() -> Schema {
    let engine = EngineConfig::default();
    let pct = (DEFAULT_ATTAINMENT_TARGET * 100.0).round();
    Schema {
        workloads: WORKLOADS.into_iter().map(WorkloadInfo::of).collect(),
        presets: cost::PRESETS
            .iter()
            .map(|p| Preset {
                name: p.name,
                label: format!("Llama-3-8B · {}", p.gpu),
                model: MODEL,
                gpu: p.gpu,
                source: p.source,
                v1_default_max_num_seqs: p.v1_default_max_num_seqs,
                v1_default_max_num_batched_tokens: p.v1_default_max_num_batched_tokens,
            })
            .collect(),
        max_model_len: MAX_MODEL_LEN,
        options: Options {
            max_num_seqs: &[8, 16, 32, 64, 128, 256],
            max_num_batched_tokens: &[256, 512, 1024, 2048, 4096, 8192],
            kv_cache_tokens: &[50_000, 100_000, 200_000, 440_000],
            knee_rules: vec![
                Choice { value: "attainment", label: format!("{pct}% meet both SLOs") },
                Choice { value: "p99", label: "both p99s meet the SLOs".to_string() },
            ],
        },
        load_range: LoadRange { min: 0.0, max: 1.2, step: 0.01 },
        loads: loads(),
        compare_loads: COMPARE_LOADS,
        attainment_target: DEFAULT_ATTAINMENT_TARGET,
        warmup_fraction: WARMUP_FRACTION,
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
            think_time_s: 10.0,
            kv_cache_tokens: engine.kv_cache_tokens,
            requests: DEFAULT_REQUESTS,
            seed: Config::default().seed,
            knee_rule: "attainment",
            latency_scale: "linear",
        },
        engine,
    }
}

/// The config a lesson lab runs for `workload` under `load`: the baseline engine on the default
/// GPU, the workload's SLOs, `requests` requests of which the warm-up fraction is left out.
pub fn lesson_config(workload: WorkloadPreset, load: LoadConfig, requests: u32) -> Config {
    let w = self::workload(workload);
    Config {
        engine: EngineConfig::default(),
        cost: CostConfig::roofline(cost::PRESETS[0].name),
        workload: WorkloadConfig::preset(w.preset),
        load,
        slo: SloConfig { ttft_ms: w.slo_ttft_ms, tpot_ms: w.slo_tpot_ms, knee: KneeRule::default() },
        run: RunConfig { requests, warmup_requests: Some((f64::from(requests) * WARMUP_FRACTION) as u32) },
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
        assert!(s.presets.iter().any(|p| p.name == s.defaults.preset));
        assert!(s.loads.iter().all(|&l| l > s.load_range.min && l <= s.load_range.max));
        assert_eq!(s.loads.len(), 24);
        assert_eq!(s.loads[16], 0.85);
        assert_eq!(s.options.knee_rules[0].label, "90% meet both SLOs");
    }

    #[test]
    fn the_lesson_config_is_valid_and_carries_the_workloads_slos() {
        let c = lesson_config(WorkloadPreset::Rag, LoadConfig::open_offered(0.85), 4000);
        assert_eq!((c.slo.ttft_ms, c.slo.tpot_ms), (2000.0, 200.0));
        assert_eq!(c.run.warmup_requests, Some(400));
        crate::Scenario::new(&c).expect("the lesson's config is valid");
    }
}

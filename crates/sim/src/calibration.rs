//! The replica held against published measurements: each figure, the setup that reproduces it,
//! our number and the ratio. `kneelab calibrate` prints it; `tests/calibration.rs` pins it.
//!
//! Sources (their numbers are also in the project's reference notes):
//! - **Vidur** (microsoft/vidur, MLSys'24): the operator profile of Llama-3-8B on an A100-80GB
//!   (`data/profiling/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv` and its attention and norm
//!   files), the linear and norm operators of all 32 layers summed, read from the table.
//! - **H100 estimate**: Vidur has no H100 profile of Llama-3-8B; its A100 profile scaled by the
//!   H100/A100 ratio of its Llama-2-7B profiles, by token count (an estimate, not a measurement).
//! - **vLLM V1** (the V1 alpha release post, 2025-01-27, figure "v1_llama"): Llama-3.1-8B on one
//!   H100, ShareGPT prompts, latency against QPS, read off the figure's markers to about
//!   +-0.05 s and taken as mean end-to-end latency. Its knee (where latency has doubled) sits
//!   at about 55-65 QPS.

use serde::Serialize;

use crate::config::{
    Config, CostConfig, EngineConfig, LoadConfig, RunConfig, SloConfig, WorkloadConfig, WorkloadPreset,
};
use crate::cost::{CostModel, LLAMA_3_8B_A100, LLAMA_3_8B_H100};
use crate::error::ConfigError;
use crate::{prepare, simulate_with_capacity};

/// One published figure against ours.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// What is compared (`A100 linear layers, 512 tokens`).
    pub figure: String,
    /// Where the published number comes from, and how it was read.
    pub source: &'static str,
    /// The published number.
    pub published: f64,
    /// Ours, from the engine.
    pub ours: f64,
    /// The unit of both (`ms`, `s`, `req/s`).
    pub unit: &'static str,
    /// `ours / published`.
    pub ratio: f64,
    /// The largest `|ratio - 1|` the calibration accepts (`tests/calibration.rs` holds it);
    /// `None` for a figure shown but not held.
    pub tolerance: Option<f64>,
}

impl Row {
    fn new(
        figure: String,
        source: &'static str,
        published: f64,
        ours: f64,
        unit: &'static str,
        tolerance: Option<f64>,
    ) -> Row {
        Row { figure, source, published, ours, unit, ratio: ours / published, tolerance }
    }

    /// Whether ours is within the tolerance of the published number (a shown figure always is).
    pub fn holds(&self) -> bool {
        self.tolerance.is_none_or(|t| (self.ratio - 1.0).abs() <= t)
    }
}

const VIDUR: &str = "Vidur A100-80GB profile of Llama-3-8B, linear + norm operators (table)";
const H100_ESTIMATE: &str = "Vidur's A100 profile x Llama-2-7B's H100/A100 ratios (an estimate)";
const V1_POST: &str = "vLLM V1 alpha post (2025-01-27), Llama-3.1-8B on 1 H100, ShareGPT (figure, +-0.05 s)";

/// Vidur's A100 rows: tokens in the step, ms.
pub const VIDUR_A100_MS: [(u64, f64); 10] = [
    (1, 9.7),
    (64, 11.2),
    (128, 13.2),
    (256, 19.5),
    (384, 27.7),
    (512, 34.6),
    (1024, 75.1),
    (2048, 145.6),
    (4096, 273.6),
    (8192, 545.0),
];

/// The H100 estimate: tokens in the step, ms.
pub const H100_ESTIMATE_MS: [(u64, f64); 9] =
    [(1, 5.9), (64, 6.8), (128, 6.9), (256, 10.0), (384, 13.0), (512, 12.4), (1024, 23.3), (2048, 44.0), (4096, 88.4)];

/// vLLM V1's mean end-to-end latency (s) by QPS on one H100, and whether the calibration holds
/// ours to it (the points past the knee are shown, not held: there a 5% error in capacity is a
/// several-fold error in queueing).
pub const V1_E2E_S: [(f64, f64, bool); 6] = [
    (1.0, 1.68, true),
    (20.0, 1.99, true),
    (40.0, 2.80, true),
    (50.0, 3.89, false),
    (60.0, 7.10, false),
    (70.0, 13.5, false),
];

/// Where V1's knee sits on that figure: the middle of 55-65 QPS.
pub const V1_KNEE_QPS: f64 = 60.0;

/// The replica the V1 figure ran: the H100 preset with V1's defaults of the time (budget 2,048,
/// chunked prefill, `max_num_seqs` 1,024), an 80 GB card's KV cache at 0.9 memory use, and the
/// ShareGPT-like workload (`scenario::SHAREGPT_LIKE`, lengths drawn jointly), at `load`.
pub fn v1_setup(load: LoadConfig, requests: u32) -> Config {
    Config {
        seed: 1,
        engine: EngineConfig {
            max_num_seqs: 1024,
            max_num_batched_tokens: 2048,
            chunked_prefill: true,
            kv_cache_tokens: 440_000,
            block_size_tokens: 16,
        },
        cost: CostConfig::roofline(LLAMA_3_8B_H100.name),
        workload: WorkloadConfig::preset(WorkloadPreset::Sharegpt),
        load,
        slo: SloConfig::default(),
        run: RunConfig { requests, warmup_requests: None },
    }
}

fn tokens_text(tokens: u64) -> String {
    if tokens == 1 { "1 token".into() } else { format!("{tokens} tokens") }
}

/// Every row, from the engine: the step-time rows from the cost model, the V1 rows from runs of
/// `requests` requests.
pub fn report(requests: u32) -> Result<Vec<Row>, ConfigError> {
    let mut rows = Vec::new();
    let a100 = CostModel::from_config(&CostConfig::roofline(LLAMA_3_8B_A100.name))?;
    for (tokens, ms) in VIDUR_A100_MS {
        let ours = (a100.compute_s(tokens) - LLAMA_3_8B_A100.overhead_ms / 1e3) * 1e3;
        rows.push(Row::new(format!("A100 linear layers, {}", tokens_text(tokens)), VIDUR, ms, ours, "ms", Some(0.10)));
    }
    let h100 = CostModel::from_config(&CostConfig::roofline(LLAMA_3_8B_H100.name))?;
    for (tokens, ms) in H100_ESTIMATE_MS {
        let ours = (h100.compute_s(tokens) - LLAMA_3_8B_H100.overhead_ms / 1e3) * 1e3;
        rows.push(Row::new(
            format!("H100 linear layers, {}", tokens_text(tokens)),
            H100_ESTIMATE,
            ms,
            ours,
            "ms",
            Some(0.10),
        ));
    }
    let (_, cap) = prepare(&v1_setup(LoadConfig::open_offered(1.0), requests))?;
    for (qps, e2e_s, held) in V1_E2E_S {
        let summary = simulate_with_capacity(&v1_setup(LoadConfig::open_rate(qps), requests), cap)?;
        let tolerance = held.then_some(0.15);
        rows.push(Row::new(format!("V1 mean E2E at {qps} QPS"), V1_POST, e2e_s, summary.e2e_s.mean, "s", tolerance));
    }
    rows.push(Row::new("V1 knee on one H100".into(), V1_POST, V1_KNEE_QPS, cap.rps, "req/s", Some(0.15)));
    Ok(rows)
}

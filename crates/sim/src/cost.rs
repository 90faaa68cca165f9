//! Step-time cost models: how long one engine step takes, from what it computes and reads.
//!
//! Both models split a step's time into a part that depends on the tokens computed and a part
//! linear in the context tokens attention reads. The split is what lets the engine advance a
//! run of identical decode steps in one exact jump (see `simulation.rs`).

use crate::config::{CostConfig, CostModelKind};
use crate::error::ConfigError;

/// A calibrated roofline model of one model on one GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RooflinePreset {
    /// The name used in configs.
    pub name: &'static str,
    /// Fixed per-step overhead outside the linear layers.
    pub overhead_ms: f64,
    /// `a`: the weight-bound floor of the linear layers (a one-token step).
    pub min_step_ms: f64,
    /// `b`: compute time per token once a step is compute-bound.
    pub compute_ms_per_token: f64,
    /// KV cache bytes per token of context.
    pub kv_bytes_per_token: f64,
    /// Peak HBM bandwidth.
    pub hbm_gb_s: f64,
    /// Fraction of peak bandwidth that reads achieve.
    pub bandwidth_efficiency: f64,
    /// Where the numbers come from.
    pub source: &'static str,
    /// The GPU's name as people say it.
    pub gpu: &'static str,
    /// `vllm serve`'s default `--max-num-seqs` on this GPU class in vLLM V1 (`EngineArgs`'
    /// batch defaults: 1,024 on GPUs of 70 GiB or more other than A100, else 256).
    pub v1_default_max_num_seqs: u32,
    /// `vllm serve`'s default `--max-num-batched-tokens` there (8,192, else 2,048). V1 always
    /// chunks prefill.
    pub v1_default_max_num_batched_tokens: u32,
}

/// Llama-3-8B in bf16 on one A100-80GB.
///
/// - `a` = 9.7 ms, `b` = 0.066 ms/token: fit of Vidur's (MLSys'24) profile of the linear and
///   norm operators of all 32 layers on A100-80GB (1 token 9.7 ms, 512 tokens 34.6 ms,
///   2048 tokens 145.6 ms, 8192 tokens 545 ms); `sqrt(a^2 + (b N)^2)` is within 10% from 1 to
///   8192 tokens.
/// - overhead 1.5 ms: vLLM 0.6 measured an 11.5 ms decode step at batch <= 10 on A100-80GB
///   (LambdaLabsML/vllm-benchmark); 9.7 ms of linear layers plus ~0.3 ms of attention reads
///   leave 1.5 ms for sampling, scheduling and launches.
/// - 131,072 KV bytes per token (2 x 32 layers x 8 KV heads x 128 dims x 2 bytes); 2,039 GB/s
///   HBM at an effective 0.68 of peak, which reproduces the measured decode steps.
pub const LLAMA_3_8B_A100: RooflinePreset = RooflinePreset {
    name: "llama-3-8b-a100",
    overhead_ms: 1.5,
    min_step_ms: 9.7,
    compute_ms_per_token: 0.066,
    kv_bytes_per_token: 131_072.0,
    hbm_gb_s: 2039.0,
    bandwidth_efficiency: 0.68,
    source: "Vidur A100-80GB operator profile; vLLM 0.6 decode step 11.5 ms (LambdaLabsML/vllm-benchmark)",
    gpu: "A100-80GB",
    v1_default_max_num_seqs: 256,
    v1_default_max_num_batched_tokens: 2048,
};

/// Llama-3-8B in bf16 on one H100-SXM.
///
/// - `a` = 9.7 ms x 2039 / 3350 = 5.9 ms: the weight-read floor scales with HBM bandwidth.
/// - `b` = 0.066 ms x 312 / 989 = 0.0208 ms/token: the compute slope scales with dense bf16
///   FLOP/s at the same utilisation as on A100.
/// - overhead 1.0 ms: vLLM 0.6 measured a 7.2 ms decode step at batch <= 10 on H100-SXM
///   (LambdaLabsML/vllm-benchmark). The same source's TTFTs for 10 prompts of 1,369 tokens
///   (127 ms A100, 62 ms H100) exceed both presets' prefill step by the same ~33 ms of
///   serving overhead outside the engine, which supports the two slopes.
/// - 3,350 GB/s HBM at an effective 0.68 of peak.
pub const LLAMA_3_8B_H100: RooflinePreset = RooflinePreset {
    name: "llama-3-8b-h100",
    overhead_ms: 1.0,
    min_step_ms: 5.9,
    compute_ms_per_token: 0.0208,
    kv_bytes_per_token: 131_072.0,
    hbm_gb_s: 3350.0,
    bandwidth_efficiency: 0.68,
    source: "A100 profile scaled by HBM bandwidth and bf16 FLOP/s; vLLM 0.6 decode step 7.2 ms (LambdaLabsML/vllm-benchmark)",
    gpu: "H100-SXM",
    v1_default_max_num_seqs: 1024,
    v1_default_max_num_batched_tokens: 8192,
};

/// Every roofline preset, by name.
pub const PRESETS: [RooflinePreset; 2] = [LLAMA_3_8B_A100, LLAMA_3_8B_H100];

/// Looks a preset up by name.
pub fn preset(name: &str) -> Option<&'static RooflinePreset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// A resolved cost model; all times in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CostModel {
    /// `t = step + per_token x tokens + per_context x context`.
    Linear {
        /// Fixed time per step.
        step_s: f64,
        /// Time per token computed.
        per_token_s: f64,
        /// Time per context token read.
        per_context_s: f64,
    },
    /// `t = overhead + sqrt(a^2 + (b x tokens)^2) + per_context x context`.
    Roofline {
        /// Fixed overhead.
        overhead_s: f64,
        /// Weight-bound floor `a`.
        a_s: f64,
        /// Compute slope `b` per token.
        b_s: f64,
        /// KV bytes per token / effective bandwidth.
        per_context_s: f64,
    },
}

impl CostModel {
    /// The time of a step computing `tokens` tokens while reading `context_tokens` of KV cache.
    pub fn step_s(&self, tokens: u64, context_tokens: u64) -> f64 {
        self.compute_s(tokens) + self.per_context_s() * context_tokens as f64
    }

    /// The part of a step's time that depends only on the tokens computed.
    pub fn compute_s(&self, tokens: u64) -> f64 {
        match *self {
            CostModel::Linear { step_s, per_token_s, .. } => step_s + per_token_s * tokens as f64,
            CostModel::Roofline { overhead_s, a_s, b_s, .. } => {
                let compute = b_s * tokens as f64;
                overhead_s + (a_s * a_s + compute * compute).sqrt()
            }
        }
    }

    /// Extra step time per context token read.
    pub fn per_context_s(&self) -> f64 {
        match *self {
            CostModel::Linear { per_context_s, .. } | CostModel::Roofline { per_context_s, .. } => per_context_s,
        }
    }

    /// Resolves and validates a cost config.
    pub fn from_config(c: &CostConfig) -> Result<CostModel, ConfigError> {
        let linear_fields = [
            ("step_ms", c.step_ms.is_some()),
            ("per_token_ms", c.per_token_ms.is_some()),
            ("per_context_token_ms", c.per_context_token_ms.is_some()),
        ];
        let roofline_fields = [
            ("preset", c.preset.is_some()),
            ("overhead_ms", c.overhead_ms.is_some()),
            ("min_step_ms", c.min_step_ms.is_some()),
            ("compute_ms_per_token", c.compute_ms_per_token.is_some()),
            ("kv_bytes_per_token", c.kv_bytes_per_token.is_some()),
            ("hbm_gb_s", c.hbm_gb_s.is_some()),
            ("bandwidth_efficiency", c.bandwidth_efficiency.is_some()),
        ];
        let (foreign, model) = match c.model {
            CostModelKind::Linear => (&roofline_fields[..], "linear"),
            CostModelKind::Roofline => (&linear_fields[..], "roofline"),
        };
        if let Some((name, _)) = foreign.iter().find(|(_, set)| *set) {
            return Err(ConfigError::new(format!("cost.{name}"), format!("does not apply to model \"{model}\"")));
        }
        match c.model {
            CostModelKind::Linear => {
                let step_ms = c.step_ms.ok_or_else(|| {
                    ConfigError::new("cost.step_ms", "is required for model \"linear\" (time of every step, in ms)")
                })?;
                let step_ms = check_ms("cost.step_ms", step_ms, 1e-6, 1e6)?;
                let per_token_ms = check_ms("cost.per_token_ms", c.per_token_ms.unwrap_or(0.0), 0.0, 1e4)?;
                let per_context_ms =
                    check_ms("cost.per_context_token_ms", c.per_context_token_ms.unwrap_or(0.0), 0.0, 1e3)?;
                Ok(CostModel::Linear {
                    step_s: step_ms / 1e3,
                    per_token_s: per_token_ms / 1e3,
                    per_context_s: per_context_ms / 1e3,
                })
            }
            CostModelKind::Roofline => {
                let base = match &c.preset {
                    Some(name) => Some(*preset(name).ok_or_else(|| {
                        let names: Vec<_> = PRESETS.iter().map(|p| format!("\"{}\"", p.name)).collect();
                        ConfigError::new(
                            "cost.preset",
                            format!("unknown preset \"{name}\"; known presets: {}", names.join(", ")),
                        )
                    })?),
                    None => None,
                };
                let get = |name: &str, given: Option<f64>, from_preset: Option<f64>| {
                    given.or(from_preset).ok_or_else(|| {
                        ConfigError::new(format!("cost.{name}"), "is required for model \"roofline\" without a preset")
                    })
                };
                let overhead_ms = get("overhead_ms", c.overhead_ms, base.map(|p| p.overhead_ms))?;
                let a_ms = get("min_step_ms", c.min_step_ms, base.map(|p| p.min_step_ms))?;
                let b_ms = get("compute_ms_per_token", c.compute_ms_per_token, base.map(|p| p.compute_ms_per_token))?;
                let kv = get("kv_bytes_per_token", c.kv_bytes_per_token, base.map(|p| p.kv_bytes_per_token))?;
                let bw = get("hbm_gb_s", c.hbm_gb_s, base.map(|p| p.hbm_gb_s))?;
                let eff = get("bandwidth_efficiency", c.bandwidth_efficiency, base.map(|p| p.bandwidth_efficiency))?;
                let overhead_ms = check_ms("cost.overhead_ms", overhead_ms, 0.0, 1e6)?;
                let a_ms = check_ms("cost.min_step_ms", a_ms, 0.0, 1e6)?;
                let b_ms = check_ms("cost.compute_ms_per_token", b_ms, 0.0, 1e4)?;
                if overhead_ms + a_ms <= 0.0 {
                    return Err(ConfigError::new(
                        "cost.min_step_ms",
                        "overhead_ms + min_step_ms must be above 0 (a step cannot take no time)",
                    ));
                }
                let kv = check_ms("cost.kv_bytes_per_token", kv, 0.0, 1e9)?;
                let bw = check_ms("cost.hbm_gb_s", bw, 1e-3, 1e9)?;
                let eff = check_ms("cost.bandwidth_efficiency", eff, 1e-3, 1.0)?;
                Ok(CostModel::Roofline {
                    overhead_s: overhead_ms / 1e3,
                    a_s: a_ms / 1e3,
                    b_s: b_ms / 1e3,
                    per_context_s: kv / (bw * 1e9 * eff),
                })
            }
        }
    }
}

fn check_ms(path: &str, v: f64, min: f64, max: f64) -> Result<f64, ConfigError> {
    if v.is_finite() && v >= min && v <= max {
        Ok(v)
    } else {
        Err(ConfigError::new(path, format!("must be a number from {min} to {max}, got {v}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roofline(name: &str) -> CostModel {
        CostModel::from_config(&CostConfig::roofline(name)).unwrap()
    }

    /// Vidur's A100 profile of the linear layers (no overhead, no attention).
    #[test]
    fn a100_linear_layers_match_vidur_within_10_percent() {
        let m = roofline("llama-3-8b-a100");
        let CostModel::Roofline { overhead_s, .. } = m else { panic!() };
        let rows = [(1, 9.7), (64, 11.2), (128, 13.2), (256, 19.5), (512, 34.6), (2048, 145.6), (8192, 545.0)];
        for (tokens, ms) in rows {
            let model_ms = (m.compute_s(tokens) - overhead_s) * 1e3;
            let err = (model_ms - ms) / ms;
            assert!(err.abs() <= 0.10, "{tokens} tokens: model {model_ms:.1} ms vs Vidur {ms} ms ({err:+.3})");
        }
    }

    /// vLLM 0.6 decode steps at batch 10, with ~300 tokens of context per sequence.
    #[test]
    fn decode_steps_match_vllm_measurements_within_10_percent() {
        for (name, ms) in [("llama-3-8b-a100", 11.5), ("llama-3-8b-h100", 7.2)] {
            let model_ms = roofline(name).step_s(10, 10 * 300) * 1e3;
            let err = (model_ms - ms) / ms;
            assert!(err.abs() <= 0.10, "{name}: model {model_ms:.2} ms vs measured {ms} ms ({err:+.3})");
        }
    }

    #[test]
    fn linear_is_affine_in_both_terms() {
        let m = CostModel::from_config(&CostConfig::linear(10.0, 0.5, 0.01)).unwrap();
        assert!((m.step_s(4, 100) - (0.010 + 0.002 + 0.001)).abs() < 1e-15);
    }
}

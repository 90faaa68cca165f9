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
    /// CPU time per sequence in a step (scheduling, input preparation, sampling).
    pub per_seq_ms: f64,
    /// The linear layers' time by tokens in the step, `(tokens, ms)` knots interpolated linearly
    /// (and extended along the last segment); empty: the smooth curve `sqrt(a^2 + (b N)^2)`.
    pub linear_ms: &'static [(f64, f64)],
    /// The vLLM version whose behaviour the overheads stand for.
    pub vllm: &'static str,
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

/// Llama-3-8B in bf16 on one A100-80GB, with vLLM 0.6's per-step overhead (multi-step
/// scheduling; no V1 measurement on an A100 to fit to).
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
    per_seq_ms: 0.0,
    linear_ms: &[],
    vllm: "vLLM 0.6",
    source: "Vidur A100-80GB operator profile; vLLM 0.6 decode step 11.5 ms (LambdaLabsML/vllm-benchmark)",
    gpu: "A100-80GB",
    v1_default_max_num_seqs: 256,
    v1_default_max_num_batched_tokens: 2048,
};

/// Llama-3-8B in bf16 on one H100-SXM, as vLLM V1 runs it.
///
/// - The linear layers: [`H100_LINEAR_MS`], knots interpolated linearly. A smooth
///   `sqrt(a^2 + (b N)^2)` through the ends is 20-25% fast at 256-384 tokens, where the estimate
///   bends; `a` = 5.9 ms and `b` = 0.0208 ms/token (the A100's scaled by HBM bandwidth and bf16
///   FLOP/s) remain the curve a config gets when it overrides either.
/// - overhead 2.2 ms and 8 us per sequence per step: fitted to vLLM V1's mean end-to-end
///   latency against QPS on one H100 (the V1 alpha release post, 2025-01-27; ShareGPT, budget
///   2,048, see `calibration.rs`). vLLM 0.6's 7.2 ms decode step at batch <= 10 (1.0 ms of
///   overhead) came from runs with `--num-scheduler-steps 10`, which spread the scheduler's CPU
///   time over ten steps; V1 has no multi-step, and its CPU work grows with the batch.
/// - 3,350 GB/s HBM at an effective 0.68 of peak.
pub const LLAMA_3_8B_H100: RooflinePreset = RooflinePreset {
    name: "llama-3-8b-h100",
    overhead_ms: 2.2,
    min_step_ms: 5.9,
    compute_ms_per_token: 0.0208,
    kv_bytes_per_token: 131_072.0,
    hbm_gb_s: 3350.0,
    bandwidth_efficiency: 0.68,
    per_seq_ms: H100_PER_SEQ_MS,
    linear_ms: &H100_LINEAR_MS,
    vllm: "vLLM V1",
    source: "Vidur's A100 profile scaled to H100 by Llama-2-7B's H100/A100 ratios; overheads fitted to vLLM V1's \
             latency-QPS curve on one H100 (V1 alpha release post, 2025-01-27)",
    gpu: "H100-SXM",
    v1_default_max_num_seqs: 1024,
    v1_default_max_num_batched_tokens: 8192,
};

/// The H100 linear layers by tokens in the step (ms): Vidur's A100 profile of Llama-3-8B scaled by
/// the H100/A100 ratios of its Llama-2-7B profiles (0.60 at small steps, 0.47-0.52 at 128-384
/// tokens, 0.31 at large ones). The estimate dips at 512 tokens (12.4 ms after 13.0 at 384); the
/// knots hold 12.7 ms across the two so a larger step is never faster.
const H100_LINEAR_MS: [(f64, f64); 9] = [
    (1.0, 5.9),
    (64.0, 6.8),
    (128.0, 6.9),
    (256.0, 10.0),
    (384.0, 12.7),
    (512.0, 12.7),
    (1024.0, 23.3),
    (2048.0, 44.0),
    (4096.0, 88.4),
];

/// The H100 preset's CPU time per sequence per step (fitted; see [`LLAMA_3_8B_H100`]).
const H100_PER_SEQ_MS: f64 = 0.008;

/// Every roofline preset, by name.
pub const PRESETS: [RooflinePreset; 2] = [LLAMA_3_8B_A100, LLAMA_3_8B_H100];

/// Looks a preset up by name.
pub fn preset(name: &str) -> Option<&'static RooflinePreset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// What a request costs outside the engine, in seconds: the difference between what a client
/// (`vllm bench serve`) measures and what vLLM's metrics (`vllm:time_to_first_token_seconds`)
/// see.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Frontend {
    /// Per request (HTTP, the API server).
    pub fixed_s: f64,
    /// Per prompt or output token (tokenising, detokenising).
    pub per_token_s: f64,
}

impl Frontend {
    /// Resolves and checks `cost.frontend_ms` and `cost.frontend_per_token_ms`.
    pub fn from_config(c: &CostConfig) -> Result<Frontend, ConfigError> {
        let fixed = check_ms("cost.frontend_ms", c.frontend_ms.unwrap_or(0.0), 0.0, 1e5)?;
        let per_token = check_ms("cost.frontend_per_token_ms", c.frontend_per_token_ms.unwrap_or(0.0), 0.0, 1e3)?;
        Ok(Frontend { fixed_s: fixed / 1e3, per_token_s: per_token / 1e3 })
    }

    /// Client-side TTFT for a server-side one: the request's way in, its prompt tokenised.
    pub fn ttft_s(&self, server_ttft_s: f64, prompt: u32) -> f64 {
        server_ttft_s + self.fixed_s + self.per_token_s * f64::from(prompt)
    }

    /// Client-side end-to-end latency: every token tokenised or detokenised too.
    pub fn e2e_s(&self, server_e2e_s: f64, prompt: u32, output: u32) -> f64 {
        server_e2e_s + self.fixed_s + self.per_token_s * (f64::from(prompt) + f64::from(output))
    }
}

/// A resolved cost model; all times in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CostModel {
    /// `t = step + per_token x tokens + per_seq x sequences + per_context x context`.
    Linear {
        /// Fixed time per step.
        step_s: f64,
        /// Time per token computed.
        per_token_s: f64,
        /// Time per context token read.
        per_context_s: f64,
        /// Time per sequence in the step.
        per_seq_s: f64,
    },
    /// `t = overhead + linear(tokens) + per_seq x sequences + per_context x context`, where
    /// `linear` is `sqrt(a^2 + (b x tokens)^2)` or, when `table` has knots, their interpolation.
    Roofline {
        /// Fixed overhead.
        overhead_s: f64,
        /// Weight-bound floor `a`.
        a_s: f64,
        /// Compute slope `b` per token.
        b_s: f64,
        /// KV bytes per token / effective bandwidth.
        per_context_s: f64,
        /// Time per sequence in the step.
        per_seq_s: f64,
        /// The linear layers' `(tokens, ms)` knots; empty for the smooth curve.
        table: &'static [(f64, f64)],
    },
}

/// `knots` (`(x, y)`, x increasing) interpolated linearly at `x`, held at the first value below
/// the first knot and extended along the last segment beyond the last.
fn interpolate(knots: &[(f64, f64)], x: f64) -> f64 {
    let Some(&(x0, y0)) = knots.first() else { return 0.0 };
    if x <= x0 || knots.len() == 1 {
        return y0;
    }
    let i = knots.iter().position(|&(k, _)| k >= x).unwrap_or(knots.len() - 1).max(1);
    let ((xa, ya), (xb, yb)) = (knots[i - 1], knots[i]);
    ya + (yb - ya) * (x - xa) / (xb - xa)
}

impl CostModel {
    /// The time of a step computing `tokens` tokens for `seqs` sequences while reading
    /// `context_tokens` of KV cache.
    pub fn step_s(&self, tokens: u64, seqs: u64, context_tokens: u64) -> f64 {
        self.step_s_after(self.compute_s(tokens), seqs, context_tokens)
    }

    /// [`CostModel::step_s`] given its [`CostModel::compute_s`] (a caller that remembers it).
    pub fn step_s_after(&self, compute_s: f64, seqs: u64, context_tokens: u64) -> f64 {
        compute_s + self.per_seq_s() * seqs as f64 + self.per_context_s() * context_tokens as f64
    }

    /// The part of a step's time that depends only on the tokens computed.
    pub fn compute_s(&self, tokens: u64) -> f64 {
        match *self {
            CostModel::Linear { step_s, per_token_s, .. } => step_s + per_token_s * tokens as f64,
            CostModel::Roofline { overhead_s, a_s, b_s, table, .. } => {
                if !table.is_empty() {
                    return overhead_s + interpolate(table, tokens as f64) / 1e3;
                }
                let compute = b_s * tokens as f64;
                overhead_s + (a_s * a_s + compute * compute).sqrt()
            }
        }
    }

    /// Extra step time per sequence in the step.
    pub fn per_seq_s(&self) -> f64 {
        match *self {
            CostModel::Linear { per_seq_s, .. } | CostModel::Roofline { per_seq_s, .. } => per_seq_s,
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
        let per_seq = |default: f64| check_ms("cost.per_seq_ms", c.per_seq_ms.unwrap_or(default), 0.0, 1e3);
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
                    per_seq_s: per_seq(0.0)? / 1e3,
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
                // A preset's table stands for its linear layers unless a or b is given.
                let own_curve = c.min_step_ms.is_some() || c.compute_ms_per_token.is_some();
                Ok(CostModel::Roofline {
                    overhead_s: overhead_ms / 1e3,
                    a_s: a_ms / 1e3,
                    b_s: b_ms / 1e3,
                    per_context_s: kv / (bw * 1e9 * eff),
                    per_seq_s: per_seq(base.map_or(0.0, |p| p.per_seq_ms))? / 1e3,
                    table: if own_curve { &[] } else { base.map_or(&[], |p| p.linear_ms) },
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

    /// vLLM 0.6 decode steps at batch 10, with ~300 tokens of context per sequence (the A100
    /// preset keeps that version's overhead; the H100 one stands for V1, see `calibration.rs`).
    #[test]
    fn the_a100_decode_step_matches_vllm_0_6_within_10_percent() {
        let (name, ms) = ("llama-3-8b-a100", 11.5);
        let model_ms = roofline(name).step_s(10, 10, 10 * 300) * 1e3;
        let err = (model_ms - ms) / ms;
        assert!(err.abs() <= 0.10, "{name}: model {model_ms:.2} ms vs measured {ms} ms ({err:+.3})");
    }

    #[test]
    fn linear_is_affine_in_both_terms() {
        let m = CostModel::from_config(&CostConfig::linear(10.0, 0.5, 0.01)).unwrap();
        assert!((m.step_s(4, 4, 100) - (0.010 + 0.002 + 0.001)).abs() < 1e-15);
        let with_seqs =
            CostModel::from_config(&CostConfig { per_seq_ms: Some(0.25), ..CostConfig::linear(10.0, 0.5, 0.01) });
        assert!((with_seqs.unwrap().step_s(4, 3, 100) - (0.010 + 0.002 + 0.00075 + 0.001)).abs() < 1e-15);
    }

    #[test]
    fn the_h100_table_is_interpolated_and_never_falls_with_tokens() {
        let m = roofline("llama-3-8b-h100");
        let linear_ms = |n: u64| (m.compute_s(n) - LLAMA_3_8B_H100.overhead_ms / 1e3) * 1e3;
        assert!((linear_ms(1) - 5.9).abs() < 1e-9);
        assert!((linear_ms(192) - (6.9 + 10.0) / 2.0).abs() < 1e-9, "halfway between the 128 and 256 knots");
        assert!((linear_ms(8192) - (88.4 + 44.4 * 2.0)).abs() < 1e-9, "beyond the last knot, along its segment");
        assert!((1..=8192).step_by(7).map(linear_ms).collect::<Vec<_>>().windows(2).all(|w| w[1] >= w[0]));
        // Overriding a or b gives the smooth curve back.
        let own = CostConfig { min_step_ms: Some(5.9), ..CostConfig::roofline("llama-3-8b-h100") };
        let smooth = CostModel::from_config(&own).unwrap();
        let want = 2.2 + (5.9f64 * 5.9 + (0.0208f64 * 256.0) * (0.0208 * 256.0)).sqrt();
        assert!((smooth.compute_s(256) * 1e3 - want).abs() < 1e-9);
    }

    #[test]
    fn per_seq_ms_is_checked_and_defaults_to_the_preset() {
        assert_eq!(roofline("llama-3-8b-h100").per_seq_s(), 0.008e-3);
        assert_eq!(roofline("llama-3-8b-a100").per_seq_s(), 0.0);
        for bad in [-1.0, f64::NAN, 1e4] {
            let c = CostConfig { per_seq_ms: Some(bad), ..CostConfig::linear(1.0, 0.0, 0.0) };
            assert_eq!(CostModel::from_config(&c).unwrap_err().path, "cost.per_seq_ms", "{bad}");
        }
    }
}

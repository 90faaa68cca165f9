//! A replica's capacity as the least of its limits, roofline style, from the engine's own
//! parameters: no run needed.
//!
//! Little's Law on the batch says `num_requests_running = throughput x time in the batch`, so a
//! batch of at most `R` sequences serves at most `R / time in the batch`. Three things bound the
//! rate:
//!
//! - **the sequence cap**: `max_num_seqs / time in the batch` with the batch full;
//! - **the KV cache**: as many sequences as the cache holds, over their time in the batch;
//! - **prefill**: every step computes at most `max_num_batched_tokens`, so the prefill token
//!   rate is what that budget leaves after the decode tokens, over the step time; divided by the
//!   mean prompt it is a request rate.
//!
//! Each is a mean-value estimate of the steady state at that limit: a step carries one decode
//! token per decoding sequence, some steps carry a prefill chunk, and every step reads each
//! running sequence's context. The engine's measured saturation sits within 3% of the least
//! of them on the lesson's workloads (`tests/limits.rs` holds them to it).

use serde::{Deserialize, Serialize};

use crate::scenario::Scenario;

/// Which resource a limit comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// `--max-num-seqs` over the time in the batch.
    SeqCap,
    /// The sequences the KV cache holds over the time in the batch.
    KvCache,
    /// The step token budget's prefill tokens per second over the mean prompt.
    Prefill,
}

/// One limit on a replica's throughput, and the steady state it describes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    /// The resource.
    pub kind: LimitKind,
    /// The highest request rate it allows.
    pub rps: f64,
    /// Sequences in the batch there (`num_requests_running`).
    pub running: f64,
    /// Mean time in the batch there, first scheduled to last token.
    pub batch_s: f64,
    /// Mean step time there.
    pub step_s: f64,
    /// Tokens computed per step there.
    pub tokens_per_step: f64,
    /// Prefill tokens computed per second there.
    pub prefill_tokens_per_s: f64,
}

/// Every limit of a replica and the one that binds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// `max_num_seqs / time in the batch` with the batch full.
    pub seq_cap: Limit,
    /// KV-resident sequences over their time in the batch.
    pub kv_cache: Limit,
    /// Prefill token rate over the mean prompt.
    pub prefill: Limit,
    /// The least of them; on a tie within [`TIE`] prefill is named, because the batch then fills
    /// only because prefill chunks make every step long.
    pub binding: LimitKind,
    /// The binding limit's rate: the estimated capacity.
    pub rps: f64,
}

/// Limits closer than this (relative) count as a tie.
pub const TIE: f64 = 0.03;

/// The fluid iterations: each is a handful of float operations, and 60 settle every fixed point
/// to far below the model's own error.
const ITERATIONS: usize = 60;

/// Means of the workload the limits need.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Mean prompt tokens.
    prompt: f64,
    /// Mean decode steps of a request (output tokens after the first).
    decode_steps: f64,
    /// Time-averaged context of a sequence in the batch: a request holds its seat in proportion
    /// to its output, so the mean is size-biased: `E[P] + E[O^2] / (2 E[O])`.
    context: f64,
}

/// Computes the limits of `scenario`'s engine, cost model and workload (its load is ignored).
pub fn limits(scenario: &Scenario) -> Limits {
    let engine = &scenario.engine;
    let output_mean = scenario.output.mean().max(1.0);
    let shape = Shape {
        prompt: scenario.prompt.mean().max(1.0),
        decode_steps: (output_mean - 1.0).max(0.0),
        context: scenario.prompt.mean() + scenario.output.mean_square() / (2.0 * output_mean),
    };
    let budget = engine.max_num_batched_tokens as f64;
    let cap = engine.max_num_seqs as f64;
    // Blocks are allocated whole: half a block of slack per sequence on average.
    let kv_context = shape.context + engine.block_size_tokens as f64 / 2.0;
    let kv_sequences = (engine.kv_blocks * engine.block_size_tokens as u64) as f64 / kv_context;

    let seq_cap = full_batch(scenario, shape, LimitKind::SeqCap, cap, budget);
    let kv_cache = full_batch(scenario, shape, LimitKind::KvCache, kv_sequences, budget);
    let prefill = prefill_bound(scenario, shape, budget, cap.min(kv_sequences));

    let batch = if kv_cache.rps < seq_cap.rps { kv_cache } else { seq_cap };
    let binding = if prefill.rps <= batch.rps * (1.0 + TIE) { prefill } else { batch };
    Limits { seq_cap, kv_cache, prefill, binding: binding.kind, rps: binding.rps }
}

/// The steady state with `running` sequences in the batch: each step decodes the decoding ones,
/// and a share of the steps also carries a prefill chunk (a whole short prompt, or what the
/// budget leaves of a long one). The step time is the mixture of the two kinds of step, not the
/// time of the mean step: a step's compute is not linear in its tokens, and a RAG replica's
/// steps are either short decodes or full-budget prefills.
fn full_batch(scenario: &Scenario, shape: Shape, kind: LimitKind, running: f64, budget: f64) -> Limit {
    let running = running.max(1e-9);
    let mut prefill_steps = 1.0f64;
    let mut steps = shape.decode_steps + prefill_steps;
    let mut decoding = 0.0;
    for _ in 0..ITERATIONS {
        steps = shape.decode_steps + prefill_steps;
        decoding = (running * shape.decode_steps / steps).min(budget);
        prefill_steps = (shape.prompt / (budget - decoding).max(1.0)).max(1.0);
    }
    // Prefill tokens per step on average, carried in chunks of `chunk` by a share of the steps.
    let prefill_per_step = running * shape.prompt / steps;
    let chunk = (budget - decoding).max(1.0).min(shape.prompt);
    let share = (prefill_per_step / chunk).min(1.0);
    // Every running sequence is in every step, decoding or taking its chunk.
    let context = scenario.cost.per_context_s() * running * shape.context + scenario.cost.per_seq_s() * running;
    let step_s =
        (1.0 - share) * step_s(scenario, decoding, 0.0) + share * step_s(scenario, decoding + chunk, 0.0) + context;
    let batch_s = steps * step_s;
    let rps = running / batch_s;
    Limit {
        kind,
        rps,
        running,
        batch_s,
        step_s,
        tokens_per_step: decoding + share * chunk,
        prefill_tokens_per_s: rps * shape.prompt,
    }
}

/// The steady state with every step's budget full: `rate x (prompt + decode steps)` tokens per
/// second fill `budget` tokens per step, with as many sequences running as the rate and the
/// time in the batch imply (at most `max_running`).
fn prefill_bound(scenario: &Scenario, shape: Shape, budget: f64, max_running: f64) -> Limit {
    let per_request = shape.prompt + shape.decode_steps;
    let mut step = step_s(scenario, budget, 0.0);
    let mut rps = budget / (per_request * step);
    let mut running = 0.0;
    let mut batch_s = 0.0;
    for _ in 0..ITERATIONS {
        let decoding = rps * shape.decode_steps * step;
        let prefill_steps = (shape.prompt / (budget - decoding).max(1.0)).max(1.0);
        batch_s = (shape.decode_steps + prefill_steps) * step;
        running = (rps * batch_s).min(max_running);
        step = step_s(scenario, budget, running * shape.context) + scenario.cost.per_seq_s() * running;
        rps = budget / (per_request * step);
    }
    Limit {
        kind: LimitKind::Prefill,
        rps,
        running,
        batch_s,
        step_s: step,
        tokens_per_step: budget,
        prefill_tokens_per_s: rps * shape.prompt,
    }
}

/// The cost model's time for a step of `tokens` tokens reading `context` tokens, both means.
fn step_s(scenario: &Scenario, tokens: f64, context: f64) -> f64 {
    // The cost model takes whole tokens; its compute part is smooth, so round the mean.
    scenario.cost.compute_s(tokens.round().max(1.0) as u64) + scenario.cost.per_context_s() * context
}

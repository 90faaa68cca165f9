//! Helpers shared by the integration tests: configs that reduce the replica to textbook queues,
//! and a runner.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use kneelab_sim::{
    Config, CostConfig, DistConfig, EngineConfig, LoadConfig, Options, RunConfig, Simulation, SloConfig, Summary,
    WorkloadConfig, WorkloadPreset, schema,
};

/// A replica that is a textbook queue: `seats` servers, a constant `step_ms` step, 1-token prompts
/// (one step emits the first token), so a request's service time is `step x output tokens`.
pub fn textbook(seats: u32, step_ms: f64, output: DistConfig, load: LoadConfig, requests: u32) -> Config {
    Config {
        seed: 1,
        engine: EngineConfig {
            max_num_seqs: seats,
            max_num_batched_tokens: seats.max(16),
            chunked_prefill: true,
            kv_cache_tokens: 1 << 28,
            block_size_tokens: 16,
        },
        cost: CostConfig::linear(step_ms, 0.0, 0.0),
        workload: WorkloadConfig::explicit(DistConfig::fixed(1), output),
        load,
        slo: SloConfig { ttft_ms: 1000.0, tpot_ms: 50.0, ..SloConfig::default() },
        run: RunConfig { requests, warmup_requests: Some(requests / 20) },
    }
}

/// The RAG workload as the page's lesson runs it (`kneelab_sim::schema`: the baseline engine on
/// the A100 preset, RAG's SLOs), at `load`.
pub fn rag(load: LoadConfig, requests: u32) -> Config {
    schema::lesson_config(WorkloadPreset::Rag, load, requests)
}

/// The chat workload as the page's lesson runs it, at `load`.
pub fn chat(load: LoadConfig, requests: u32) -> Config {
    schema::lesson_config(WorkloadPreset::Chat, load, requests)
}

/// Runs a config to its summary.
pub fn run(config: &Config) -> Summary {
    kneelab_sim::simulate(config).unwrap_or_else(|e| panic!("config should run: {e}"))
}

/// Runs a config under several seeds and averages one statistic.
pub fn seed_mean(config: &Config, seeds: u64, f: impl Fn(&Summary) -> f64) -> f64 {
    (0..seeds)
        .map(|s| {
            let c = Config { seed: 1000 + s, ..config.clone() };
            let scenario = kneelab_sim::prepare_scenario(&c).unwrap();
            f(&Simulation::new(&scenario, Options::default()).run().unwrap().summary)
        })
        .sum::<f64>()
        / seeds as f64
}

/// Relative error of `got` against `want`.
pub fn rel(got: f64, want: f64) -> f64 {
    (got - want) / want
}

/// Asserts `got` is within `tol` (relative) of `want`, and prints the error so test logs carry
/// the figures.
pub fn assert_close(case: &str, got: f64, want: f64, tol: f64) {
    let e = rel(got, want);
    println!("{case:<48} got {got:>10.5} want {want:>10.5} error {:+.2}% (tolerance {:.1}%)", e * 100.0, tol * 100.0);
    assert!(e.abs() <= tol, "{case}: got {got}, want {want} ({:+.2}%, tolerance {:.1}%)", e * 100.0, tol * 100.0);
}

//! Throughput benchmark of the engine (`cargo xtask bench`): simulated requests per second on
//! the textbook M/M/1-like config and on RAG traffic, and the time of a full sweep.
#![allow(clippy::disallowed_methods, reason = "a benchmark reads the wall clock; the engine does not")]

use std::time::{Duration, Instant};

use kneelab_sim::capacity;
use kneelab_sim::sweep::{self, SweepOptions};
use kneelab_sim::{
    Config, CostConfig, DistConfig, EngineConfig, LoadConfig, Options, RunConfig, Scenario, Simulation, WorkloadConfig,
    WorkloadPreset,
};

/// Median wall time of `reps` runs of `f`.
fn median_time(reps: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[reps / 2]
}

fn requests_per_s(name: &str, scenario: &Scenario, reps: usize) -> f64 {
    let n = scenario.requests as f64;
    let t = median_time(reps, || {
        let outcome = Simulation::new(scenario, Options::default()).run().expect("valid scenario");
        std::hint::black_box(outcome.summary.throughput_rps);
    });
    let rate = n / t.as_secs_f64();
    println!("{name:<44} {:>9.0} requests in {:>8.1} ms = {:>6.2} M requests/s", n, t.as_secs_f64() * 1e3, rate / 1e6);
    rate
}

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    println!("kneelab-sim benchmark (median of {reps} runs, one thread)\n");

    // M/M/1-like: one seat, a constant 10 ms step, 1-token prompts, geometric outputs of mean 100.
    let mm1 = Config {
        engine: EngineConfig {
            max_num_seqs: 1,
            max_num_batched_tokens: 16,
            kv_cache_tokens: 1 << 20,
            ..Default::default()
        },
        cost: CostConfig::linear(10.0, 0.0, 0.0),
        workload: WorkloadConfig::explicit(DistConfig::fixed(1), DistConfig::geometric(100.0)),
        load: LoadConfig::open_rate(0.9),
        run: RunConfig { requests: 1_000_000, warmup_requests: Some(10_000) },
        ..Config::default()
    };
    let mm1_rate = requests_per_s("M/M/1-like, utilisation 0.9", &Scenario::new(&mm1).unwrap(), reps);

    // RAG on the A100 preset, 64 seats, 90% of capacity (capacity measured once, outside the timing).
    let rag = Config {
        workload: WorkloadConfig::preset(WorkloadPreset::Rag),
        load: LoadConfig::open_offered(0.9),
        run: RunConfig { requests: 200_000, warmup_requests: Some(2_000) },
        ..Config::default()
    };
    let rag_scenario = Scenario::new(&rag).unwrap();
    let rag_rate = requests_per_s("rag, llama-3-8b-a100, 64 seqs, load 0.9", &rag_scenario, reps);

    // Capacity measurement alone.
    let t_cap = median_time(reps, || {
        std::hint::black_box(capacity::measure(&rag_scenario));
    });
    println!("{:<44} {:>8.1} ms", "rag capacity measurement", t_cap.as_secs_f64() * 1e3);

    // A full sweep: 24 load points x 5,000 requests, capacity included.
    let sweep_config = Config { run: RunConfig { requests: 5_000, warmup_requests: Some(500) }, ..rag.clone() };
    let loads = sweep::load_grid(0.05, 1.2, 0.05).unwrap();
    assert_eq!(loads.len(), 24);
    let t_sweep = median_time(reps, || {
        std::hint::black_box(sweep::sweep(&sweep_config, &loads, SweepOptions::default()).unwrap());
    });
    let cap = capacity::measure(&rag_scenario);
    let t_sweep_reuse = median_time(reps, || {
        let options = SweepOptions { capacity: Some(cap), ..SweepOptions::default() };
        std::hint::black_box(sweep::sweep(&sweep_config, &loads, options).unwrap());
    });
    println!("{:<44} {:>8.1} ms", "sweep 24 x 5,000 rag (with capacity)", t_sweep.as_secs_f64() * 1e3);
    println!("{:<44} {:>8.1} ms", "sweep 24 x 5,000 rag (capacity known)", t_sweep_reuse.as_secs_f64() * 1e3);

    println!();
    println!(
        "targets: M/M/1 >= 4 M/s ({:.2}x), rag >= 1 M/s ({:.2}x), sweep <= 100 ms ({:.2}x)",
        mm1_rate / 4e6,
        rag_rate / 1e6,
        0.1 / t_sweep.as_secs_f64()
    );
    // General-purpose discrete-event simulators on an M/M/1 queue at utilisation 0.9, measured
    // on a 2-core machine like this one: SimPy 4.1 about 89k customers/s, Ciw 3.2 about 57k/s.
    println!(
        "M/M/1 against general-purpose simulators: {:.0}x SimPy 4.1 (89k/s), {:.0}x Ciw 3.2 (57k/s)",
        mm1_rate / 89e3,
        mm1_rate / 57e3
    );
}

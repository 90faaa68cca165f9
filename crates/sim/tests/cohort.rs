//! The lazy cohort (decoding requests advanced together) against the engine forming every step
//! request by request: the same runs, bit for bit, summaries, traces, queue series, snapshots and
//! histograms included, over configs that exercise every path (chunked and whole prefill,
//! preemption on a tight KV cache, open, bursty, closed and burst loads, block sizes).

use kneelab_sim::{Config, Options, Simulation};

fn config(json: &str) -> Config {
    serde_json::from_str(json).unwrap()
}

/// Everything a run produced, as text exact to the last bit (Debug prints f64 round-trippably).
fn run(config: &Config, cohort: bool) -> String {
    let scenario = kneelab_sim::prepare_scenario(config).unwrap();
    let options = Options {
        series: true,
        trace_requests: 12,
        trace_from: 40,
        snapshot_after: Some(300),
        snapshot_min_waiting: 1,
        cohort,
        ..Options::default()
    };
    let mut sim = Simulation::new(&scenario, options);
    while sim.step() {}
    let steps = sim.steps();
    format!("{steps} steps\n{:?}", sim.finish())
}

#[test]
fn the_cohort_changes_no_result() {
    let engines = [
        r#"{"max_num_seqs": 64, "max_num_batched_tokens": 2048, "kv_cache_tokens": 440000}"#,
        r#"{"max_num_seqs": 64, "max_num_batched_tokens": 2048, "kv_cache_tokens": 50000}"#,
        r#"{"max_num_seqs": 256, "max_num_batched_tokens": 512, "kv_cache_tokens": 120000, "block_size_tokens": 32}"#,
        r#"{"max_num_seqs": 16, "chunked_prefill": false, "max_num_batched_tokens": 8192, "kv_cache_tokens": 30000}"#,
        r#"{"max_num_seqs": 8, "max_num_batched_tokens": 64, "kv_cache_tokens": 20000, "block_size_tokens": 1}"#,
    ];
    let loads = [
        r#"{"mode": "open", "offered_load": 0.9}"#,
        r#"{"mode": "open", "offered_load": 1.1, "burstiness": 0.3}"#,
        r#"{"mode": "closed", "offered_load": 0.8, "think_time_s": 2}"#,
        r#"{"mode": "burst", "max_concurrency": 24}"#,
    ];
    let mut preempting = 0;
    for (i, engine) in engines.iter().enumerate() {
        for (j, load) in loads.iter().enumerate() {
            for workload in ["chat", "rag"] {
                let warmup = if load.contains("burst") { 0 } else { 100 };
                let c = config(&format!(
                    r#"{{"seed": {seed}, "engine": {engine}, "workload": {{"preset": "{workload}"}}, "load": {load},
                        "run": {{"requests": 1200, "warmup_requests": {warmup}}}}}"#,
                    seed = 7 + i * 10 + j
                ));
                let (lazy, explicit) = (run(&c, true), run(&c, false));
                assert!(lazy == explicit, "engine {i}, load {j}, {workload}: the cohort changed the run");
                if !lazy.contains("num_preemptions: 0,") {
                    preempting += 1;
                }
            }
        }
    }
    // The comparison covers the path that dissolves the cohort.
    assert!(preempting >= 6, "only {preempting} configs preempted");
}

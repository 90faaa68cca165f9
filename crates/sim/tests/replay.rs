//! Replayed draws ([`Draws`], what a sweep's points and a lab's slider runs share) against draws
//! made afresh: the same runs, bit for bit, whether the replay covers every arrival, some of them
//! or none, and draws made for another seed or workload are left unused.

use std::sync::Arc;

use kneelab_sim::simulation::Draws;
use kneelab_sim::{Config, Options, Scenario, Simulation};

fn scenario(seed: u64, workload: &str, load: &str) -> Scenario {
    let config: Config = serde_json::from_str(&format!(
        r#"{{"seed": {seed}, "workload": {{"preset": "{workload}"}}, "load": {load},
            "run": {{"requests": 1500, "warmup_requests": 100}}}}"#
    ))
    .unwrap();
    kneelab_sim::prepare_scenario(&config).unwrap()
}

/// Everything a run produced, as text exact to the last bit (Debug prints f64 round-trippably).
fn run(mut sim: Simulation) -> String {
    while sim.step() {}
    format!("{} steps, {} arrived\n{:?}", sim.steps(), sim.arrived(), sim.finish())
}

fn options() -> Options {
    Options { series: true, trace_requests: 12, trace_from: 40, ..Options::default() }
}

#[test]
fn a_replayed_run_is_the_run_drawn_afresh() {
    let loads = [
        r#"{"mode": "open", "offered_load": X}"#,
        r#"{"mode": "open", "offered_load": X, "burstiness": 0.3}"#,
        r#"{"mode": "open", "offered_load": X, "burstiness": 2.5}"#,
        r#"{"mode": "closed", "offered_load": X, "think_time_s": 2}"#,
    ];
    for (j, load) in loads.iter().enumerate() {
        for (workload, x) in [("chat", "0.5"), ("rag", "0.9"), ("rag", "1.2")] {
            let seed = 11 + j as u64;
            let sc = scenario(seed, workload, &load.replace('X', x));
            let fresh = run(Simulation::new(&sc, options()));
            // Made at another load of the same mode, as a sweep's are.
            let other = scenario(seed, workload, &load.replace('X', "0.3"));
            for n in [0, 1, 700, 1500, 4000] {
                let draws = Arc::new(Draws::new(&other, n));
                assert!(draws.fit(&sc), "load {j}, {workload}: draws of the same seed and workload fit");
                let replayed = run(Simulation::replaying(&sc, options(), Some(&draws)));
                assert!(replayed == fresh, "load {j}, {workload} at {x}, {n} replayed: the run changed");
            }
        }
    }
}

#[test]
fn draws_of_another_seed_or_workload_are_not_used() {
    let load = r#"{"mode": "open", "offered_load": 0.9}"#;
    let sc = scenario(5, "rag", load);
    let fresh = run(Simulation::new(&sc, options()));
    for other in [
        scenario(6, "rag", load),
        scenario(5, "chat", load),
        scenario(5, "rag", r#"{"mode": "open", "offered_load": 0.9, "burstiness": 0.5}"#),
    ] {
        let draws = Arc::new(Draws::new(&other, 2000));
        assert!(!draws.fit(&sc));
        assert!(run(Simulation::replaying(&sc, options(), Some(&draws))) == fresh, "unfit draws changed the run");
    }
}

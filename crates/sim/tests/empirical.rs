//! Empirical lengths: `[prompt, output, weight]` rows drawn jointly, and the ShareGPT-like preset.

mod common;

use common::textbook;
use kneelab_sim::dist::MAX_ROWS;
use kneelab_sim::{
    Config, DistConfig, LoadConfig, Options, RunConfig, Simulation, WorkloadConfig, WorkloadPreset, simulate,
};

fn with_rows(rows: Vec<(u64, u64, f64)>) -> Config {
    let mut c = textbook(4, 10.0, DistConfig::fixed(5), LoadConfig::burst(None), 12);
    c.workload = WorkloadConfig::empirical(rows);
    c.run = RunConfig { requests: 12, warmup_requests: None };
    c
}

#[test]
fn lengths_are_drawn_together_in_proportion_to_the_weights() {
    let mut c = with_rows(vec![(1, 10, 3.0), (100, 1, 1.0)]);
    c.load = LoadConfig::open_rate(1.0);
    c.run = RunConfig { requests: 4000, warmup_requests: Some(0) };
    let scenario = kneelab_sim::prepare_scenario(&c).unwrap();
    let options = Options { trace_requests: 4000, ..Options::default() };
    let outcome = Simulation::new(&scenario, options).run().unwrap();
    let pairs: Vec<(u32, u32)> = outcome.traces.iter().map(|t| (t.prompt_tokens, t.output_tokens)).collect();
    assert_eq!(pairs.len(), 4000);
    assert!(pairs.iter().all(|&p| p == (1, 10) || p == (100, 1)), "only the table's rows, never a mix of them");
    let share = pairs.iter().filter(|&&p| p == (1, 10)).count() as f64 / 4000.0;
    assert!((share - 0.75).abs() < 0.03, "weight 3 of 4: {share}");
    // The columns' means are the weighted ones.
    assert!((scenario.prompt.mean() - (3.0 + 100.0) / 4.0).abs() < 1e-12);
    assert!((scenario.output.mean() - (30.0 + 1.0) / 4.0).abs() < 1e-12);
}

#[test]
fn a_one_row_table_is_the_fixed_lengths_and_a_zero_output_runs_one_step() {
    // As tests/burst.rs: 12 requests of 1 + 5 tokens on 4 seats, 10 ms steps, drain 150 ms.
    let s = simulate(&with_rows(vec![(1, 5, 7.0)])).unwrap();
    assert!((s.duration_s - 0.150).abs() < 1e-9, "{}", s.duration_s);
    // An output of 0 runs as 1 (vLLM emits the first token): three waves of one step.
    let s = simulate(&with_rows(vec![(1, 0, 1.0)])).unwrap();
    assert!((s.duration_s - 0.030).abs() < 1e-9, "{}", s.duration_s);
}

#[test]
fn bad_tables_name_the_row_and_column() {
    type Row = (u64, u64, f64);
    let rows: [(Vec<Row>, &str); 7] = [
        (vec![], "workload.empirical"),
        (vec![(0, 5, 1.0)], "workload.empirical[0][0]"),
        (vec![(5, 5, 1.0), (5, 2_000_000, 1.0)], "workload.empirical[1][1]"),
        (vec![(5, 5, 0.0)], "workload.empirical[0][2]"),
        (vec![(5, 5, f64::NAN)], "workload.empirical[0][2]"),
        (vec![(5, 5, -1.0)], "workload.empirical[0][2]"),
        (vec![(1, 1, 1.0); MAX_ROWS + 1], "workload.empirical"),
    ];
    for (table, path) in rows {
        let e = with_rows(table).validate().unwrap_err();
        assert_eq!(e.path, path, "{e}");
    }
    let mut both = with_rows(vec![(5, 5, 1.0)]);
    both.workload.prompt_tokens = Some(DistConfig::fixed(3));
    assert_eq!(both.validate().unwrap_err().path, "workload.prompt_tokens");
    both.workload =
        WorkloadConfig { preset: Some(WorkloadPreset::Chat), ..WorkloadConfig::empirical(vec![(5, 5, 1.0)]) };
    assert_eq!(both.validate().unwrap_err().path, "workload.preset");
    // A row too long for the KV cache is caught like any other longest request.
    let mut big = with_rows(vec![(5, 5, 1.0), (900_000, 1, 1.0)]);
    big.engine.kv_cache_tokens = 100_000;
    assert_eq!(big.validate().unwrap_err().path, "engine.kv_cache_tokens");
    // JSON: arrays of three.
    let c = Config::from_json(r#"{"workload": {"empirical": [[77, 160, 2], [900, 40, 0.5]]}}"#).unwrap();
    assert_eq!(c.workload.empirical, Some(vec![(77, 160, 2.0), (900, 40, 0.5)]));
    assert!(Config::from_json(r#"{"workload": {"empirical": [[77, 160]]}}"#).is_err());
}

#[test]
fn the_sharegpt_like_preset_has_its_stated_means() {
    let c = Config { workload: WorkloadConfig::preset(WorkloadPreset::Sharegpt), ..Config::default() };
    let s = kneelab_sim::prepare_scenario(&Config { load: LoadConfig::open_rate(1.0), ..c }).unwrap();
    assert!((s.prompt.mean() - 210.4).abs() < 0.5, "{}", s.prompt.mean());
    assert!((s.output.mean() - 196.9).abs() < 0.5, "{}", s.output.mean());
    assert_eq!(serde_json::from_str::<WorkloadPreset>("\"sharegpt\"").unwrap(), WorkloadPreset::Sharegpt);
}

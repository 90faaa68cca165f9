//! `vllm bench serve --request-rate inf --num-prompts N [--max-concurrency C]`: a burst that
//! drains, checked against cases computed by hand, and its bad inputs.

mod common;

use common::textbook;
use kneelab_sim::sweep::{SweepOptions, sweep};
use kneelab_sim::{Config, DistConfig, LoadConfig, LoadMode, RunConfig, simulate};

/// 12 requests of one prompt token and 5 output tokens on 4 seats with a constant 10 ms step:
/// each request takes 5 steps (its prefill step emits the first token).
fn burst(max_concurrency: Option<u32>) -> Config {
    let mut c = textbook(4, 10.0, DistConfig::fixed(5), LoadConfig::burst(max_concurrency), 12);
    c.run = RunConfig { requests: 12, warmup_requests: None };
    c
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn an_unlimited_burst_drains_in_waves_of_a_full_batch() {
    let s = simulate(&burst(None)).unwrap();
    assert_eq!(s.load_mode, "burst");
    assert_eq!(s.requests_completed, 12, "statistics cover every request: no warm-up");
    // Three waves of 4, 5 steps of 10 ms each: the drain takes exactly 150 ms.
    assert!(close(s.duration_s, 0.150), "drain {} s", s.duration_s);
    assert!(close(s.throughput_rps, 12.0 / 0.150));
    // Waves finish at 50, 100 and 150 ms; their first tokens come at 10, 60 and 110 ms.
    assert!(close(s.e2e_s.mean, 0.100), "mean E2E {}", s.e2e_s.mean);
    assert!(close(s.ttft_s.mean, 0.060), "mean TTFT {}", s.ttft_s.mean);
    assert!(close(s.queue_s.mean, 0.050), "the later waves queue 50 and 100 ms: {}", s.queue_s.mean);
    assert!(close(s.tpot_s.mean, 0.010));
}

#[test]
fn a_capped_burst_keeps_at_most_max_concurrency_in_flight() {
    let s = simulate(&burst(Some(2))).unwrap();
    assert_eq!(s.users, Some(2));
    // Two at a time on four seats: six waves of 50 ms, and nobody waits in the engine's queue.
    assert!(close(s.duration_s, 0.300), "drain {} s", s.duration_s);
    assert!(close(s.e2e_s.mean, 0.050));
    assert!(close(s.queue_s.mean, 0.0));
    assert!(s.num_requests_running_mean <= 2.0 + 1e-9);
    // A cap above N changes nothing from the unlimited burst.
    assert_eq!(simulate(&burst(Some(100))).unwrap().duration_s, simulate(&burst(None)).unwrap().duration_s);
}

#[test]
fn bad_burst_configs_name_their_field() {
    type Spoil = fn(&mut Config);
    let rows: [(Spoil, &str); 8] = [
        (|c| c.load.rate_rps = Some(5.0), "load.rate_rps"),
        (|c| c.load.offered_load = Some(0.5), "load.offered_load"),
        (|c| c.load.users = Some(3), "load.users"),
        (|c| c.load.think_time_s = Some(1.0), "load.think_time_s"),
        (|c| c.load.burstiness = Some(0.5), "load.burstiness"),
        (|c| c.load.max_concurrency = Some(0), "load.max_concurrency"),
        (|c| c.run.warmup_requests = Some(2), "run.warmup_requests"),
        (|c| c.load = LoadConfig { max_concurrency: Some(4), ..LoadConfig::open_rate(1.0) }, "load.max_concurrency"),
    ];
    for (spoil, path) in rows {
        let mut c = burst(None);
        spoil(&mut c);
        assert_eq!(c.validate().unwrap_err().path, path);
    }
    let mut ok = burst(None);
    ok.run.warmup_requests = Some(0);
    assert!(ok.validate().is_ok(), "an explicit 0 warm-up is fine");
    let e = sweep(&burst(None), &[0.5], SweepOptions::default()).unwrap_err();
    assert_eq!(e.path, "load.mode");
    // The JSON spelling is vLLM's.
    let json = r#"{"load": {"mode": "burst", "max_concurrency": 8}, "run": {"requests": 100}}"#;
    let c = Config::from_json(json).unwrap();
    assert_eq!((c.load.mode, c.load.max_concurrency), (LoadMode::Burst, Some(8)));
}

#[test]
fn the_frontend_adds_to_what_a_client_measures_not_to_what_the_engine_reports() {
    let mut c = burst(None);
    c.cost.frontend_ms = Some(5.0);
    c.cost.frontend_per_token_ms = Some(0.1);
    let s = simulate(&c).unwrap();
    // The engine's view is unchanged...
    assert!(close(s.ttft_s.mean, 0.060) && close(s.e2e_s.mean, 0.100));
    // ...the client's adds 5 ms per request and 0.1 ms per token: 1 prompt token to the first
    // token, 1 + 5 tokens to the last.
    assert!(close(s.client_ttft_s.mean, 0.060 + 0.005 + 0.0001), "{}", s.client_ttft_s.mean);
    assert!(close(s.client_e2e_s.mean, 0.100 + 0.005 + 0.0006), "{}", s.client_e2e_s.mean);
    assert!(close(s.client_ttft_s.p99 - s.ttft_s.p99, 0.0051), "a shift of every request alike here");
    // Without a frontend the two views agree.
    let plain = simulate(&burst(None)).unwrap();
    assert_eq!(plain.client_ttft_s, plain.ttft_s);
    assert_eq!(plain.client_e2e_s, plain.e2e_s);
    for (field, bad) in
        [("frontend_ms", -1.0), ("frontend_ms", f64::NAN), ("frontend_ms", 1e6), ("frontend_per_token_ms", -0.5)]
    {
        let mut c = burst(None);
        if field == "frontend_ms" {
            c.cost.frontend_ms = Some(bad);
        } else {
            c.cost.frontend_per_token_ms = Some(bad);
        }
        assert_eq!(c.validate().unwrap_err().path, format!("cost.{field}"), "{field} = {bad}");
    }
}

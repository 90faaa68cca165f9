//! Open loads whose rate changes over time (`load.traffic`), drawn by thinning: the arrivals in
//! each stretch of the curve match its rate, and every misuse names its field.

mod common;

use common::textbook;
use kneelab_sim::sweep::{SweepOptions, sweep};
use kneelab_sim::traffic::{Curve, TrafficConfig, TrafficShape};
use kneelab_sim::{Config, DistConfig, LoadConfig, Options, RunConfig, Simulation};

/// 64 seats with a 1 ms step and 2-token answers: the replica keeps up, so arrivals are admitted
/// as they come and `arrived()` at a time counts the arrivals before it.
fn open(rate_rps: f64, traffic: TrafficConfig) -> Config {
    let mut load = LoadConfig::open_rate(rate_rps);
    load.traffic = Some(traffic);
    let mut c = textbook(64, 1.0, DistConfig::fixed(2), load, 1_000_000);
    c.run = RunConfig { requests: 1_000_000, warmup_requests: Some(0) };
    c
}

/// Arrivals counted at each of `times`.
fn arrivals_at(config: &Config, times: &[f64]) -> Vec<u64> {
    let mut sim = Simulation::new(&kneelab_sim::prepare_scenario(config).unwrap(), Options::default());
    times
        .iter()
        .map(|&t| {
            sim.advance_to(t);
            sim.arrived()
        })
        .collect()
}

fn within(got: u64, want: f64, share: f64) -> bool {
    (got as f64 / want - 1.0).abs() <= share
}

#[test]
fn a_step_triples_the_arrival_rate_from_its_time_on() {
    let step = TrafficConfig { shape: TrafficShape::Step, at_s: Some(1000.0), factor: Some(3.0), ..Default::default() };
    let n = arrivals_at(&open(2.0, step), &[1000.0, 2000.0]);
    let (before, after) = (n[0], n[1] - n[0]);
    // 2,000 and 6,000 expected: 5% is over 2 standard deviations of each Poisson count.
    assert!(within(before, 2000.0, 0.05), "before the step: {before}");
    assert!(within(after, 6000.0, 0.05), "after the step: {after}");
}

#[test]
fn a_diurnal_day_brings_its_mean_rate_and_peaks_at_half_a_period() {
    let day =
        TrafficConfig { shape: TrafficShape::Diurnal, period_s: Some(4000.0), trough: Some(0.2), ..Default::default() };
    let n = arrivals_at(&open(5.0, day), &[500.0, 1500.0, 2500.0, 4000.0]);
    // A day's mean factor is (1 + 0.2) / 2 = 0.6: 5 x 0.6 x 4000 = 12,000 arrivals.
    assert!(within(n[3], 12_000.0, 0.04), "a day: {}", n[3]);
    // The hour around the peak (1500-2500 s) sees far more than the first 500 s of the trough.
    let (trough, peak) = (n[0] as f64 / 500.0, (n[2] - n[1]) as f64 / 1000.0);
    assert!(peak > 3.0 * trough, "peak {peak:.2}/s vs trough {trough:.2}/s");
}

#[test]
fn a_spike_and_a_ramp_match_their_rates() {
    let spike = TrafficConfig {
        shape: TrafficShape::Spike,
        at_s: Some(500.0),
        duration_s: Some(200.0),
        factor: Some(5.0),
        ..Default::default()
    };
    let n = arrivals_at(&open(4.0, spike), &[500.0, 700.0, 1200.0]);
    assert!(within(n[1] - n[0], 4000.0, 0.06), "the spike: {}", n[1] - n[0]);
    assert!(within(n[2] - n[1], 2000.0, 0.08), "after it: {}", n[2] - n[1]);
    // A ramp from 1x to 3x over 1000 s averages 2x there.
    let ramp = TrafficConfig {
        shape: TrafficShape::Ramp,
        at_s: Some(0.0),
        duration_s: Some(1000.0),
        factor: Some(3.0),
        ..Default::default()
    };
    let n = arrivals_at(&open(4.0, ramp), &[1000.0]);
    assert!(within(n[0], 8000.0, 0.05), "the ramp: {}", n[0]);
}

#[test]
fn traffic_that_stops_ends_the_run_with_what_finished() {
    let stop = TrafficConfig { shape: TrafficShape::Step, at_s: Some(100.0), factor: Some(0.0), ..Default::default() };
    let mut c = open(2.0, stop);
    c.run = RunConfig { requests: 10_000, warmup_requests: Some(0) };
    let s = kneelab_sim::simulate(&c).unwrap();
    assert!(s.truncated, "no arrival comes after 100 s");
    assert!(within(s.requests_completed, 200.0, 0.25), "{}", s.requests_completed);
}

#[test]
fn misuse_names_the_field() {
    let spike = TrafficConfig {
        shape: TrafficShape::Spike,
        at_s: Some(1.0),
        duration_s: Some(1.0),
        factor: Some(50.0),
        ..Default::default()
    };
    let rows: Vec<(Config, &str)> = vec![
        // The curve's highest rate is held to the load's own cap.
        (
            {
                let mut c = open(1.0, spike.clone());
                c.load.rate_rps = None;
                c.load.offered_load = Some(0.5);
                c
            },
            "load.traffic.factor",
        ),
        (
            {
                let mut c = textbook(4, 10.0, DistConfig::fixed(5), LoadConfig::closed(4, 1.0), 100);
                c.load.traffic = Some(TrafficConfig::default());
                c
            },
            "load.traffic",
        ),
        (open(1.0, TrafficConfig { shape: TrafficShape::Ramp, ..Default::default() }), "load.traffic.at_s"),
    ];
    for (config, path) in rows {
        let e = config.validate().unwrap_err();
        assert_eq!(e.path, path, "{e}");
    }
    // A sweep runs one steady load per point: it refuses a curve by name.
    let mut c = open(1.0, spike);
    c.load.rate_rps = None;
    c.load.offered_load = Some(1.0);
    c.load.traffic.as_mut().unwrap().factor = Some(2.0);
    let e = sweep(&c, &[0.5], SweepOptions::default()).unwrap_err();
    assert_eq!(e.path, "load.traffic");
    // And JSON names an unknown key in the curve.
    let text =
        r#"{"load": {"mode": "open", "rate_rps": 1, "traffic": {"shape": "step", "at_s": 1, "factor": 2, "when": 3}}}"#;
    let e = Config::from_json(text).unwrap_err();
    assert!(e.to_string().contains("load.traffic"), "{e}");
}

/// A fleet's traffic and a replica's `load.traffic` differ only in their levels (rates there,
/// multiples of the base rate here): the rest of one config reads in the other.
#[test]
fn a_fleets_traffic_names_the_curve_as_a_replicas_does() {
    let fleet = serde_json::to_value(kneelab_sim::fleet::TrafficConfig::default()).unwrap();
    let shared = ["shape", "at_s", "duration_s", "burstiness"];
    for key in shared {
        assert!(fleet.get(key).is_some(), "the fleet's traffic has no {key}: {fleet}");
    }
    let replica: Config = serde_json::from_value(serde_json::json!({
        "load": {"mode": "open", "offered_load": 0.5, "burstiness": 0.5,
                 "traffic": {"shape": "spike", "at_s": 60.0, "duration_s": 30.0, "factor": 2.0}}
    }))
    .unwrap();
    let traffic = replica.load.traffic.unwrap();
    assert_eq!((traffic.shape, traffic.at_s, traffic.duration_s), (TrafficShape::Spike, Some(60.0), Some(30.0)));
    let fleet: kneelab_sim::fleet::TrafficConfig = serde_json::from_value(serde_json::json!(
        {"shape": "spike", "at_s": 60.0, "duration_s": 30.0, "burstiness": 0.5, "base_rps": 10.0, "peak_rps": 20.0}
    ))
    .unwrap();
    assert_eq!((fleet.shape, fleet.at_s, fleet.duration_s, fleet.burstiness), (TrafficShape::Spike, 60.0, 30.0, 0.5));
}

/// A fleet's rate is the replica's curve drawn from `base_rps` to `peak_rps`, its day the whole run.
#[test]
fn a_fleets_rate_is_the_one_curve_between_its_two_rates() {
    let curve = |shape| Curve { shape, low: 10.0, high: 40.0, at_s: 100.0, duration_s: 50.0, period_s: 1000.0 };
    let ramp = kneelab_sim::fleet::TrafficConfig {
        shape: TrafficShape::Ramp,
        base_rps: 10.0,
        peak_rps: 40.0,
        at_s: 100.0,
        duration_s: 50.0,
        ..Default::default()
    };
    assert_eq!(ramp.rate_at(125.0, 1000.0), curve(TrafficShape::Ramp).at(125.0));
    assert_eq!(ramp.rate_at(125.0, 1000.0), 25.0);
    let day = kneelab_sim::fleet::TrafficConfig { shape: TrafficShape::Diurnal, ..ramp };
    assert_eq!(day.rate_at(250.0, 1000.0), curve(TrafficShape::Diurnal).at(250.0));
}

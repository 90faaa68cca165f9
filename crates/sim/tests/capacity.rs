//! The capacity measurement, which offered load is a fraction of, must be accurate: at load 1.0 a
//! 1% error moves TTFT p99 by more than 1.5x.

mod common;

use common::{assert_close, chat, rag, textbook};
use kneelab_sim::capacity::{self, CAPACITY_REQUESTS};
use kneelab_sim::{DistConfig, LoadConfig, Scenario};

/// The replica `config` describes, under the load its capacity is measured at.
fn scenario(config: &kneelab_sim::Config) -> Scenario {
    Scenario::saturated(config).unwrap()
}

/// Fixed sizes and a constant step make capacity exact: each of c seats finishes a request every
/// `output` steps, and the next one is admitted at once.
#[test]
fn capacity_is_exact_where_it_can_be() {
    for (seats, step_ms, output) in [(1, 10.0, 100), (4, 10.0, 100), (64, 5.0, 37)] {
        let config = textbook(seats, step_ms, DistConfig::fixed(output), LoadConfig::open_rate(1.0), 1000);
        let cap = capacity::measure(&scenario(&config));
        let want = seats as f64 / (output as f64 * step_ms / 1e3);
        assert_close(&format!("capacity, {seats} seats x {output} steps of {step_ms} ms"), cap.rps, want, 0.002);
        // A request alone takes `output` steps.
        assert_close("unloaded latency", cap.base_latency_s, output as f64 * step_ms / 1e3, 1e-9);
    }
}

#[test]
fn capacity_of_random_sizes_matches_the_mean_service_time() {
    // One seat, geometric outputs of mean 100 at 10 ms: capacity 1 request/s, up to sampling error
    // of about 1 / sqrt(18,000) = 0.75%.
    let config = textbook(1, 10.0, DistConfig::geometric(100.0), LoadConfig::open_rate(1.0), 1000);
    let cap = capacity::measure(&scenario(&config));
    assert_close("capacity, M/G/1 mean service 1 s", cap.rps, 1.0, 0.025);
    assert!(cap.completions_counted >= CAPACITY_REQUESTS * 9 / 10 - 1);
}

/// The RAG capacity with the default request count agrees with one measured five times longer.
#[test]
fn rag_capacity_is_stable_in_the_request_count() {
    let base = scenario(&rag(LoadConfig::open_offered(1.0), 1000));
    let (short, _, _) = capacity::saturation(&base, CAPACITY_REQUESTS);
    let (long, _, _) = capacity::saturation(&base, 5 * CAPACITY_REQUESTS);
    assert_close("rag capacity, 20k vs 100k completions", short, long, 0.01);
    // Deterministic: the same seed measures the same capacity.
    assert_eq!(capacity::measure(&base), capacity::measure(&base));
}

/// A long run measures its capacity over two fifths of its own requests, so the load it offers
/// holds still across seeds; a lab's run (at most 20,000 requests) measures as before.
#[test]
fn a_long_run_measures_its_capacity_over_a_share_of_its_length() {
    let at = |requests: u32, seed: u64| {
        let config = kneelab_sim::Config { seed, ..chat(LoadConfig::open_offered(0.85), requests) };
        scenario(&config)
    };
    assert_eq!(capacity::completions(&at(20_000, 1)), CAPACITY_REQUESTS);
    assert_eq!(capacity::completions(&at(50_000, 1)), CAPACITY_REQUESTS);
    assert_eq!(capacity::completions(&at(1_000_000, 1)), 400_000);
    let spread = |requests: u32| {
        let caps: Vec<f64> = (1..=5).map(|seed| capacity::measure(&at(requests, seed)).rps).collect();
        let (lo, hi) = caps.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        hi / lo - 1.0
    };
    // Chat's capacity over 20,000 completions moves 1.6% across seeds 1-5; over 400,000, 0.3%.
    let (short, long) = (spread(20_000), spread(1_000_000));
    assert!(short > 0.01, "{short}");
    assert!(long < 0.005, "{long}");
}

/// An open loop pushed past capacity completes requests at the measured capacity.
#[test]
fn overloaded_open_loop_runs_at_capacity() {
    for preset in ["llama-3-8b-a100", "llama-3-8b-h100"] {
        let mut config = rag(LoadConfig::open_offered(1.3), 10_000);
        config.cost = kneelab_sim::CostConfig::roofline(preset);
        let s = kneelab_sim::simulate(&config).unwrap();
        assert_close(
            &format!("{preset}: throughput at 130% vs capacity"),
            s.throughput_rps,
            s.capacity_rps.unwrap(),
            0.02,
        );
    }
}

/// A page measures the capacity a slice at a time; any slicing gives the one-shot measurement.
#[test]
fn a_measurement_in_slices_is_the_one_shot_measurement() {
    let base = scenario(&rag(LoadConfig::open_offered(1.0), 2000));
    let whole = capacity::measure(&base);
    for slice in [1, 7, 4096] {
        let mut m = capacity::Measurement::new(&base);
        let mut slices = 1;
        let sliced = loop {
            if let Some(c) = m.advance(slice) {
                break c;
            }
            slices += 1;
        };
        assert_eq!(sliced, whole, "slices of {slice} steps");
        if slice == 1 {
            assert!(slices > 1000, "a measurement takes many steps ({slices})");
        }
    }
}

/// A capacity given out as JSON reads back as itself, NaN included (JSON writes it as `null`):
/// the page hands a lab's capacity to its third module this way.
#[test]
fn a_capacity_reads_back_from_its_json_even_with_nan_times() {
    let cap =
        kneelab_sim::Capacity { rps: 4.25, base_latency_s: f64::NAN, completions_counted: 18_000, window_s: 4_200.5 };
    let json = serde_json::to_string(&cap).unwrap();
    assert!(json.contains("\"base_latency_s\":null"), "{json}");
    let back: kneelab_sim::Capacity = serde_json::from_str(&json).unwrap();
    assert_eq!((back.rps, back.completions_counted, back.window_s), (cap.rps, cap.completions_counted, cap.window_s));
    assert!(back.base_latency_s.is_nan());
    let none: kneelab_sim::Capacity =
        serde_json::from_str(r#"{"rps": null, "base_latency_s": 1, "completions_counted": 0, "window_s": null}"#)
            .unwrap();
    assert!(none.rps.is_nan() && none.window_s.is_nan());
    assert_eq!(none.usable().unwrap_err().path, "load.offered_load", "an unknown capacity is not usable");
    assert!(
        serde_json::from_str::<kneelab_sim::Capacity>(
            r#"{"rps": "x", "base_latency_s": 1, "completions_counted": 0, "window_s": 1}"#
        )
        .is_err()
    );
}

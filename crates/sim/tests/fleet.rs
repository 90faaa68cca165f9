//! The fleet, validated like the replica: random routing against independent queues and the
//! Pollaczek-Khinchine formula, power of two choices against its mean-field limit, the routers'
//! order near the knee, a cold start's breach, and the caps.

use kneelab_sim::fleet::{
    AutoscalerConfig, FleetConfig, FleetResult, FleetRunConfig, Router, RouterConfig, Signal, TrafficConfig, run_fleet,
};
use kneelab_sim::traffic::TrafficShape;
use kneelab_sim::{Config, CostConfig, DistConfig, EngineConfig, LoadConfig, RunConfig, WorkloadConfig, simulate};

/// One request at a time, 10 ms a step, geometric outputs of mean 10: a replica that is an
/// M/G/1 queue whose service (10 ms x a geometric count) is nearly exponential.
const STEP_S: f64 = 0.010;
const MEAN_OUTPUT: f64 = 10.0;

fn queue_like(replicas: u32, rho: f64, router: Router) -> FleetConfig {
    let service_s = STEP_S * MEAN_OUTPUT;
    FleetConfig {
        seed: 7,
        engine: EngineConfig { max_num_seqs: 1, ..EngineConfig::default() },
        cost: CostConfig::linear(STEP_S * 1e3, 0.0, 0.0),
        workload: WorkloadConfig {
            prompt_tokens: Some(DistConfig::fixed(1)),
            output_tokens: Some(DistConfig::geometric(MEAN_OUTPUT)),
            ..WorkloadConfig::default()
        },
        traffic: TrafficConfig {
            shape: TrafficShape::Constant,
            base_rps: rho * replicas as f64 / service_s,
            ..TrafficConfig::default()
        },
        router: RouterConfig { policy: router },
        autoscaler: AutoscalerConfig {
            signal: Signal::None,
            min_replicas: replicas,
            max_replicas: replicas,
            ..AutoscalerConfig::default()
        },
        run: FleetRunConfig { duration_s: 4_000.0, sample_s: 10.0, gpu_hour_usd: 2.0 },
        ..FleetConfig::default()
    }
}

fn run(c: &FleetConfig) -> FleetResult {
    let r = run_fleet(c).unwrap();
    assert!(!r.totals.truncated);
    r
}

/// Pollaczek-Khinchine: the M/G/1 mean wait, plus the first step, is the mean TTFT.
fn pk_ttft(lambda: f64) -> f64 {
    let p = 1.0 / MEAN_OUTPUT;
    let (es, es2) = (STEP_S * MEAN_OUTPUT, STEP_S * STEP_S * (2.0 - p) / (p * p));
    let rho = lambda * es;
    lambda * es2 / (2.0 * (1.0 - rho)) + STEP_S
}

#[test]
fn random_routing_splits_poisson_traffic_into_independent_queues() {
    let (n, rho) = (4, 0.7);
    let fleet = queue_like(n, rho, Router::Random);
    let r = run(&fleet);
    let lambda = fleet.traffic.base_rps / n as f64;
    // The single-replica engine at lambda / N.
    let single = simulate(&Config {
        load: LoadConfig::open_rate(lambda),
        run: RunConfig { requests: 40_000, warmup_requests: Some(2_000) },
        ..fleet.replica_config()
    })
    .unwrap();
    let theory = pk_ttft(lambda);
    println!(
        "random x{n} at rho {rho}: fleet {:.4} s, one replica {:.4} s, P-K {theory:.4} s",
        r.totals.ttft_mean_s, single.ttft_s.mean
    );
    assert!((r.totals.ttft_mean_s / theory - 1.0).abs() < 0.06, "{} vs {theory}", r.totals.ttft_mean_s);
    assert!((r.totals.ttft_mean_s / single.ttft_s.mean - 1.0).abs() < 0.06);
}

#[test]
fn power_of_two_choices_matches_the_mean_field_limit() {
    // Supermarket model (Mitzenmacher; Vvedenskaya et al.): with d = 2 a queue holds at least i
    // requests with probability rho^(2^i - 1), so the mean in system is the sum of those, and
    // the mean time in system that over lambda (Little). The service here is nearly exponential
    // (squared coefficient of variation 0.9) and the fleet finite (32), hence a 10% tolerance.
    let (n, rho) = (32, 0.9);
    let r = run(&queue_like(n, rho, Router::PowerOfTwo));
    let in_system: f64 = (1..20).map(|i| libm::pow(rho, f64::from((1 << i) - 1))).sum();
    let sojourn = in_system / rho * STEP_S * MEAN_OUTPUT;
    // TTFT is the time in system less the service after the first token.
    let theory = sojourn - STEP_S * (MEAN_OUTPUT - 1.0);
    let random = pk_ttft(rho / (STEP_S * MEAN_OUTPUT));
    println!(
        "power of two x{n} at rho {rho}: {:.4} s, mean field {theory:.4} s (random: {random:.4} s)",
        r.totals.ttft_mean_s
    );
    assert!((r.totals.ttft_mean_s / theory - 1.0).abs() < 0.10, "{} vs {theory}", r.totals.ttft_mean_s);
    assert!(r.totals.ttft_mean_s < random / 3.0);
}

#[test]
fn least_loaded_beats_round_robin_beats_random_at_ninety_percent() {
    let mut got = vec![];
    for router in [Router::LeastOutstanding, Router::RoundRobin, Router::Random] {
        let t = run(&queue_like(8, 0.9, router)).totals;
        println!("{router:?}: TTFT mean {:.4} s, p99 {:.4} s", t.ttft_mean_s, t.ttft_p99_s);
        got.push((t.ttft_mean_s, t.ttft_p99_s));
    }
    assert!(got[0].0 < got[1].0 && got[1].0 < got[2].0, "{got:?}");
    assert!(got[0].1 < got[1].1 && got[1].1 < got[2].1, "{got:?}");
}

/// A step from 40% to 120% of four replicas' capacity at 600 s, scaled on the arrival rate.
fn stepped(cold_start_s: f64, target: f64) -> FleetConfig {
    let base = queue_like(4, 0.4, Router::LeastOutstanding);
    let cap = 4.0 / (STEP_S * MEAN_OUTPUT);
    FleetConfig {
        traffic: TrafficConfig {
            shape: TrafficShape::Step,
            base_rps: 0.4 * cap,
            peak_rps: 1.2 * cap,
            at_s: 600.0,
            ..base.traffic.clone()
        },
        autoscaler: AutoscalerConfig {
            signal: Signal::Rate,
            scale_up: target,
            scale_down: target / 4.0,
            interval_s: 10.0,
            window_s: 20.0,
            min_replicas: 1,
            max_replicas: 32,
            initial_replicas: Some(4),
            cooldown_s: 0.0,
            cold_start_s,
        },
        run: FleetRunConfig { duration_s: 2_400.0, sample_s: 5.0, gpu_hour_usd: 2.0 },
        ..base
    }
}

/// Seconds after the step during which a scrape's TTFT p99 broke the SLO.
fn breach_s(r: &FleetResult, slo_s: f64) -> f64 {
    let late: Vec<f64> = r.series.iter().filter(|p| p.t_s > 600.0 && p.ttft_p99_s > slo_s).map(|p| p.t_s).collect();
    late.last().map_or(0.0, |t| t - 600.0)
}

#[test]
fn a_cold_start_breaches_the_slo_for_about_its_length_and_a_margin_removes_it() {
    let slo_s = FleetConfig::default().slo.ttft_ms / 1e3;
    let mut breaches = vec![];
    for cold in [120.0, 300.0] {
        let r = run(&stepped(cold, 0.8));
        let b = breach_s(&r, slo_s);
        println!("cold start {cold} s at 80% target: breach {b} s, attainment {:.3}", r.totals.attainment);
        // About the cold start: it cannot end before the new replicas are ready, and it ends
        // soon after (a decision interval, then the backlog drains on the larger fleet).
        assert!(b >= cold && b <= cold * 1.25 + 30.0, "cold {cold}: breach {b}");
        breaches.push(b);
    }
    // A margin: hold 30% utilisation, so the fleet before the step already covers 120%.
    let r = run(&stepped(300.0, 0.3));
    let b = breach_s(&r, slo_s);
    println!(
        "cold start 300 s at 30% target: breach {b} s, attainment {:.3}, GPU-hours {:.2}",
        r.totals.attainment, r.totals.gpu_hours
    );
    assert_eq!(b, 0.0);
}

/// A fleet's `traffic.burstiness` means what a replica's `load.burstiness` means: one replica
/// behind the router waits as a lone replica does under gaps of the same gamma shape, and
/// burstier gaps wait longer than Poisson ones.
#[test]
fn traffic_burstiness_means_what_a_replicas_load_burstiness_means() {
    let ttft_mean = |burstiness: f64| {
        let mut fleet = queue_like(1, 0.7, Router::RoundRobin);
        fleet.traffic.burstiness = burstiness;
        let r = run(&fleet);
        let single = simulate(&Config {
            load: LoadConfig { burstiness: Some(burstiness), ..LoadConfig::open_rate(fleet.traffic.base_rps) },
            run: RunConfig { requests: 40_000, warmup_requests: Some(2_000) },
            ..fleet.replica_config()
        })
        .unwrap();
        println!(
            "burstiness {burstiness}: fleet {:.4} s, one replica {:.4} s",
            r.totals.ttft_mean_s, single.ttft_s.mean
        );
        assert!((r.totals.ttft_mean_s / single.ttft_s.mean - 1.0).abs() < 0.1, "burstiness {burstiness}");
        r.totals.ttft_mean_s
    };
    let (poisson, bursty) = (ttft_mean(1.0), ttft_mean(0.25));
    assert!(bursty > 1.5 * poisson, "{bursty} vs {poisson}");
}

#[test]
fn caps_and_bad_values_name_their_field() {
    type Spoil = Box<dyn Fn(&mut FleetConfig)>;
    let cases: Vec<(&str, Spoil)> = vec![
        ("autoscaler.scale_up", Box::new(|c| c.autoscaler.scale_up = 0.0)),
        ("autoscaler.min_replicas", Box::new(|c| (c.autoscaler.min_replicas, c.autoscaler.max_replicas) = (5, 4))),
        ("autoscaler.max_replicas", Box::new(|c| c.autoscaler.max_replicas = 100_000)),
        ("autoscaler.cold_start_s", Box::new(|c| c.autoscaler.cold_start_s = 1e7)),
        ("run.duration_s", Box::new(|c| c.run.duration_s = 1e9)),
        ("run.sample_s", Box::new(|c| c.run.sample_s = 0.0)),
        ("traffic.peak_rps", Box::new(|c| c.traffic.peak_rps = 90_000.0)),
        ("traffic.base_rps", Box::new(|c| c.traffic.base_rps = f64::NAN)),
        ("traffic.burstiness", Box::new(|c| c.traffic.burstiness = 0.0)),
        ("traffic.duration_s", Box::new(|c| c.traffic.duration_s = -1.0)),
        ("engine.max_num_seqs", Box::new(|c| c.engine.max_num_seqs = 0)),
    ];
    for (path, spoil) in cases {
        let mut c = FleetConfig::default();
        spoil(&mut c);
        let e = run_fleet(&c).unwrap_err();
        assert_eq!(e.path, path, "{e}");
    }
    let unknown = serde_json::from_str::<FleetConfig>(r#"{"autoscaler": {"scale_upp": 2}}"#).unwrap_err();
    assert!(unknown.to_string().contains("scale_upp"), "{unknown}");
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let c = FleetConfig {
        run: FleetRunConfig { duration_s: 600.0, ..FleetRunConfig::default() },
        ..FleetConfig::default()
    };
    assert_eq!(run_fleet(&c).unwrap(), run_fleet(&c).unwrap());
}

#[test]
fn a_routed_replica_takes_only_what_the_router_hands_it() {
    let fleet = queue_like(4, 0.7, Router::Random);
    let scenario = kneelab_sim::Scenario::routed(&fleet.replica_config()).unwrap();
    // Its scenario says whose load it is: no rate or offered load of its own to misread.
    assert_eq!(scenario.load, kneelab_sim::Load::Routed);
    assert_eq!(scenario.rate_rps(), None);
    let capacity = kneelab_sim::capacity::measure(&scenario);
    assert!(scenario.at_offered_load(0.5, &capacity).is_none());
    let mut sim = kneelab_sim::Simulation::routed(&scenario, kneelab_sim::Options::default());
    // Left alone it draws no arrivals and does not end.
    sim.advance_to(1_000.0);
    assert_eq!(sim.arrived(), 0);
    assert!(!sim.is_finished());
    // Handed two requests, it serves exactly those and reports both.
    sim.push_arrival(1_000.5);
    sim.push_arrival(1_000.6);
    sim.advance_to(2_000.0);
    let mut finished = Vec::new();
    sim.take_finished(&mut finished);
    assert_eq!((sim.arrived(), sim.completed(), finished.len()), (2, 2, 2));
    assert!(finished.iter().all(|f| f.arrival_s >= 1_000.5 && f.end_s > f.arrival_s));
    assert!(!sim.is_finished());
}

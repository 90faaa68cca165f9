//! Throughput benchmark of the engine (`cargo xtask bench`): simulated requests per second on
//! the textbook M/M/1-like config and on RAG traffic, and the time of a full sweep. The M/M/1
//! figure is set beside two others measured in the same run: a bare binary-heap M/M/1 loop
//! written the simplest way (the limit an event loop can reach), and SimPy on the same queue when
//! `python3 -c 'import simpy'` works (`pip install simpy`).
#![allow(clippy::disallowed_methods, reason = "a benchmark reads the wall clock; the engine does not")]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::process::Command;
use std::time::{Duration, Instant};

use kneelab_sim::capacity;
use kneelab_sim::sweep::{self, SweepOptions};
use kneelab_sim::{
    Config, CostConfig, DistConfig, EngineConfig, LoadConfig, Options, RunConfig, Scenario, Simulation, SweepRun,
    WorkloadConfig, WorkloadPreset,
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

/// An event time ordered by `total_cmp`, for the bare loop's heap.
#[derive(Clone, Copy, PartialEq)]
struct At(f64);
impl Eq for At {}
impl PartialOrd for At {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for At {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The bare limit: M/M/1 (arrivals at 0.9/s, exponential service of mean 1 s) as a binary heap
/// of events and a FIFO queue, nothing else. Returns the mean time in the system.
fn bare_mm1(customers: u64) -> f64 {
    let mut state = 42u64;
    let mut exp = |mean: f64| {
        // splitmix64 -> uniform in (0, 1] -> exponential
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        -mean * (((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64).ln()
    };
    // (time, true for a departure)
    let mut events = BinaryHeap::new();
    let mut queue = VecDeque::new();
    let (mut arrived, mut done, mut busy, mut total) = (0u64, 0u64, false, 0.0);
    events.push(Reverse((At(exp(1.0 / 0.9)), false)));
    while let Some(Reverse((At(t), departure))) = events.pop() {
        if departure {
            let since: f64 = queue.pop_front().expect("a departure has a customer");
            total += t - since;
            done += 1;
            if !queue.is_empty() {
                events.push(Reverse((At(t + exp(1.0)), true)));
            } else {
                busy = false;
            }
        } else {
            queue.push_back(t);
            arrived += 1;
            if !busy {
                busy = true;
                events.push(Reverse((At(t + exp(1.0)), true)));
            }
            if arrived < customers {
                events.push(Reverse((At(t + exp(1.0 / 0.9)), false)));
            }
        }
    }
    total / done as f64
}

/// SimPy's customers per second on the same M/M/1, or why it was not measured.
fn simpy_rate(customers: u64) -> Result<f64, String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mm1_simpy.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(customers.to_string())
        .output()
        .map_err(|e| format!("python3 could not start ({e})"))?;
    if !out.status.success() {
        return Err("SimPy is not installed (`pip install simpy`)".into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let seconds: f64 = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or("SimPy printed no time")?;
    Ok(customers as f64 / seconds)
}

/// `bench rag` / `bench sweep` / `bench mm1`: one run of that workload and nothing else, for
/// timing whole processes side by side (`farm-bench -- bench rag --vs 'old-bench rag'`).
fn one(what: &str) -> bool {
    let rag = Config {
        workload: WorkloadConfig::preset(WorkloadPreset::Rag),
        load: LoadConfig::open_offered(0.9),
        run: RunConfig { requests: 200_000, warmup_requests: Some(2_000) },
        ..Config::default()
    };
    match what {
        "rag" => {
            let outcome =
                Simulation::new(&kneelab_sim::prepare_scenario(&rag).unwrap(), Options::default()).run().unwrap();
            println!("{}", outcome.summary.ttft_s.p99);
        }
        "sweep" => {
            let config = Config { run: RunConfig { requests: 5_000, warmup_requests: Some(500) }, ..rag };
            let loads = sweep::load_grid(0.05, 1.2, 0.05).unwrap();
            println!("{:?}", sweep::sweep(&config, &loads, SweepOptions::default()).unwrap().knee);
        }
        "tails" => tails(),
        "mm1" => {
            let outcome = Simulation::new(&Scenario::new(&mm1_config()).unwrap(), Options::default()).run().unwrap();
            println!("{}", outcome.summary.e2e_s.mean);
        }
        _ => return false,
    }
    true
}

/// `bench tails`: how far TTFT p99 at 85% load moves with the seed, for the lab's requests per
/// point and for the engine's most, and what a run of each costs (the lesson's config, seeds 1-5,
/// each run measuring its own capacity as a lab does).
fn tails() {
    use kneelab_sim::schema::{self, lesson_config};
    println!("TTFT p99 at 85% of capacity, seeds 1-5 (spread: max / min - 1)");
    for workload in [WorkloadPreset::Rag, WorkloadPreset::Chat] {
        for requests in [schema::DEFAULT_REQUESTS, kneelab_sim::scenario::MAX_REQUESTS] {
            let (mut p99s, mut caps, mut run_s, mut cap_s) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for seed in 1..=5 {
                let config = Config { seed, ..lesson_config(workload, LoadConfig::open_offered(0.85), requests) };
                let t = Instant::now();
                let (scenario, cap) = kneelab_sim::prepare(&config).expect("the lesson's config");
                cap_s.push(t.elapsed().as_secs_f64());
                let t = Instant::now();
                let outcome = Simulation::new(&scenario, Options::default()).run().expect("valid scenario");
                run_s.push(t.elapsed().as_secs_f64());
                p99s.push(outcome.summary.ttft_s.p99);
                caps.push(cap.rps);
            }
            let spread = |v: &[f64]| {
                let (lo, hi) = v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                100.0 * (hi / lo - 1.0)
            };
            let shown: Vec<String> = p99s.iter().map(|p| format!("{p:.2}")).collect();
            println!(
                "{workload:?} x {requests:>7} requests: p99 {} s, spread {:.1}% (capacity {:.1}%); {:.0} ms a run after {:.0} ms measuring capacity",
                shown.join(" "),
                spread(&p99s),
                spread(&caps),
                run_s.iter().sum::<f64>() / run_s.len() as f64 * 1e3,
                cap_s.iter().sum::<f64>() / cap_s.len() as f64 * 1e3
            );
        }
    }
}

/// M/M/1-like: one seat, a constant 10 ms step, 1-token prompts, geometric outputs of mean 100.
fn mm1_config() -> Config {
    Config {
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
    }
}

fn main() {
    if std::env::args().nth(1).is_some_and(|a| one(&a)) {
        return;
    }
    let reps: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    println!("kneelab-sim benchmark (median of {reps} runs, one thread)\n");

    let mm1 = mm1_config();
    let mm1_rate = requests_per_s("M/M/1-like, utilisation 0.9", &Scenario::new(&mm1).unwrap(), reps);

    // RAG on the A100 preset, 64 seats, 90% of capacity (capacity measured once, outside the timing).
    let rag = Config {
        workload: WorkloadConfig::preset(WorkloadPreset::Rag),
        load: LoadConfig::open_offered(0.9),
        run: RunConfig { requests: 200_000, warmup_requests: Some(2_000) },
        ..Config::default()
    };
    let (rag_scenario, cap) = kneelab_sim::prepare(&rag).unwrap();
    requests_per_s("rag, llama-3-8b-a100, 64 seqs, load 0.9", &rag_scenario, reps);

    // A fleet day: 16 chat replicas, least outstanding routing, 80% of their capacity, 200,000
    // requests (the rate and length set from one replica's capacity, outside the timing).
    let fleet_day = {
        use kneelab_sim::fleet::{AutoscalerConfig, FleetConfig, FleetRunConfig, Signal, TrafficConfig};
        use kneelab_sim::traffic::TrafficShape;
        let base = FleetConfig { workload: WorkloadConfig::preset(WorkloadPreset::Chat), ..FleetConfig::default() };
        let rate = 0.8 * 16.0 * kneelab_sim::fleet::Fleet::new(&base).unwrap().replica_capacity_rps();
        FleetConfig {
            traffic: TrafficConfig { shape: TrafficShape::Constant, base_rps: rate, ..TrafficConfig::default() },
            autoscaler: AutoscalerConfig {
                signal: Signal::None,
                min_replicas: 16,
                max_replicas: 16,
                ..AutoscalerConfig::default()
            },
            run: FleetRunConfig { duration_s: 200_000.0 / rate, ..FleetRunConfig::default() },
            ..base
        }
    };
    let mut fleet_requests = 0;
    let t_fleet = median_time(reps, || {
        fleet_requests = std::hint::black_box(kneelab_sim::fleet::run_fleet(&fleet_day).unwrap()).totals.requests;
    });
    println!(
        "{:<44} {:>8.1} ms ({fleet_requests} requests; the aim: at most 1 s)",
        "fleet day, 16 chat replicas, load 0.8",
        t_fleet.as_secs_f64() * 1e3
    );

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
    let t_sweep_reuse = median_time(reps, || {
        let mut run = SweepRun::with_capacity(&sweep_config, &loads, cap).unwrap();
        while run.step().unwrap() {}
        let (slo, rule) = (sweep_config.slo.slo(), sweep_config.slo.knee);
        std::hint::black_box(run.assemble(slo, rule, sweep::DEFAULT_ATTAINMENT_TARGET));
    });
    println!("{:<44} {:>8.1} ms", "sweep 24 x 5,000 rag (with capacity)", t_sweep.as_secs_f64() * 1e3);
    println!("{:<44} {:>8.1} ms", "sweep 24 x 5,000 rag (capacity known)", t_sweep_reuse.as_secs_f64() * 1e3);

    println!();
    // The same M/M/1 queue, in the same run: the bare heap loop, then SimPy.
    let bare_n = 1_000_000;
    let t_bare = median_time(reps, || {
        std::hint::black_box(bare_mm1(bare_n));
    });
    let bare_rate = bare_n as f64 / t_bare.as_secs_f64();
    println!(
        "{:<44} {:>9.0} requests in {:>8.1} ms = {:>6.2} M requests/s",
        "bare binary-heap M/M/1 loop",
        bare_n as f64,
        t_bare.as_secs_f64() * 1e3,
        bare_rate / 1e6
    );
    println!("M/M/1: the engine runs at {:.2}x the bare heap loop (the aim: within 3x, 0.33x)", mm1_rate / bare_rate);
    match simpy_rate(200_000) {
        Ok(rate) => {
            println!("{:<44} {:>9.0} requests/s", "SimPy, same M/M/1 (200,000 customers)", rate);
            println!("M/M/1: the engine runs at {:.0}x SimPy (the aim: at least 100x)", mm1_rate / rate);
        }
        Err(why) => println!("SimPy not measured: {why}"),
    }
}

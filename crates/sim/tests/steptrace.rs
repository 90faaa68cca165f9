//! The step trace: every engine iteration of a window, jumps over identical decode steps
//! expanded into their steps. Tracing changes nothing in the run (the summaries are the same, bit
//! for bit), and the trace accounts for every request from one iteration to the next.

use std::collections::BTreeSet;

use kneelab_sim::{Config, Options, Outcome, Simulation, Snapshot, StepWindow};

const ENGINES: [&str; 4] = [
    r#"{"max_num_seqs": 64, "max_num_batched_tokens": 2048, "kv_cache_tokens": 440000}"#,
    r#"{"max_num_seqs": 64, "max_num_batched_tokens": 2048, "kv_cache_tokens": 50000}"#,
    r#"{"max_num_seqs": 16, "chunked_prefill": false, "max_num_batched_tokens": 8192, "kv_cache_tokens": 30000}"#,
    r#"{"max_num_seqs": 8, "max_num_batched_tokens": 64, "kv_cache_tokens": 20000, "block_size_tokens": 1}"#,
];
const LOADS: [&str; 3] = [
    r#"{"mode": "open", "offered_load": 0.85}"#,
    r#"{"mode": "open", "offered_load": 1.1, "burstiness": 0.3}"#,
    r#"{"mode": "closed", "offered_load": 0.8, "think_time_s": 2}"#,
];

fn configs() -> impl Iterator<Item = (String, Config)> {
    ENGINES.iter().enumerate().flat_map(|(i, engine)| {
        LOADS.iter().enumerate().flat_map(move |(j, load)| {
            ["chat", "rag"].into_iter().map(move |workload| {
                let json = format!(
                    r#"{{"seed": {seed}, "engine": {engine}, "workload": {{"preset": "{workload}"}}, "load": {load},
                        "run": {{"requests": 800, "warmup_requests": 100}}}}"#,
                    seed = 3 + i * 10 + j
                );
                (format!("engine {i}, load {j}, {workload}"), serde_json::from_str(&json).unwrap())
            })
        })
    })
}

fn run(config: &Config, step_trace: Option<StepWindow>, cohort: bool) -> Outcome {
    let options = Options { step_trace, cohort, ..Options::default() };
    Simulation::new(&kneelab_sim::prepare_scenario(config).unwrap(), options).run().unwrap()
}

const WINDOW: StepWindow = StepWindow { after_arrivals: 300, after_s: 0.0, steps: 3000 };

#[test]
fn tracing_changes_no_result() {
    for (name, c) in configs() {
        let (plain, traced) = (run(&c, None, true), run(&c, Some(WINDOW), true));
        assert!(plain.step_trace.is_empty());
        assert!(!traced.step_trace.is_empty(), "{name}: nothing traced");
        // Debug prints f64 round-trippably: equal text is equal bits.
        assert_eq!(format!("{:?}", plain.summary), format!("{:?}", traced.summary), "{name}");
        assert_eq!(format!("{:?}", plain.itl_histogram), format!("{:?}", traced.itl_histogram), "{name}");
    }
}

#[test]
fn the_lazy_cohort_and_the_explicit_engine_trace_the_same_steps() {
    for (name, c) in configs() {
        let (lazy, explicit) = (run(&c, Some(WINDOW), true), run(&c, Some(WINDOW), false));
        assert!(lazy.step_trace == explicit.step_trace, "{name}: the traces differ");
    }
}

fn ids(step: &Snapshot) -> BTreeSet<u64> {
    step.seats.iter().map(|s| s.id).collect()
}

#[test]
fn the_trace_accounts_for_every_request_from_one_step_to_the_next() {
    let mut jumps = 0;
    let (mut preemptions, mut arrivals, mut completions) = (0, 0, 0);
    for (name, c) in configs() {
        let trace = run(&c, Some(WINDOW), true).step_trace;
        assert!(trace.len() <= WINDOW.steps as usize, "{name}");
        for s in &trace {
            assert!(s.seats.len() <= s.max_num_seqs as usize, "{name}: step {}", s.index);
            assert!(s.decode_tokens + s.prefill_tokens <= s.max_num_batched_tokens, "{name}: step {}", s.index);
            assert!(s.kv_blocks_used <= s.kv_blocks, "{name}: step {}", s.index);
            assert!(s.duration_s > 0.0);
            let seats = ids(s);
            assert!(s.admitted.iter().chain(&s.completed).all(|id| seats.contains(id)), "{name}: step {}", s.index);
            assert!(s.preempted.iter().all(|id| !seats.contains(id)), "{name}: step {}", s.index);
            assert_eq!(s.waiting_s.len(), (s.waiting as usize).min(64), "{name}: step {}", s.index);
            preemptions += s.preempted.len();
            arrivals += s.arrived.len();
            completions += s.completed.len();
        }
        for w in trace.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            assert_eq!(b.index, a.index + 1, "{name}: every iteration is there");
            let end = a.t_s + a.duration_s;
            assert!(b.t_s >= end - 1e-9 * end.max(1.0), "{name}: step {} starts before {} ends", b.index, a.index);
            if a.seats.len() == b.seats.len() && a.admitted.is_empty() && b.admitted.is_empty() {
                // Inside a jump the next step starts as this one ends.
                jumps += 1;
                assert!((b.t_s - end).abs() <= 1e-9 * end.max(1.0), "{name}: step {}", b.index);
            }
            // The seats: this step's, less who finished or was preempted, plus who was admitted.
            let mut expected = ids(a);
            a.completed.iter().chain(&b.preempted).for_each(|id| {
                expected.remove(id);
            });
            expected.extend(&b.admitted);
            assert_eq!(expected, ids(b), "{name}: seats of step {}", b.index);
            // The queue: the last step's, plus arrivals since, less admissions, plus preemptions.
            let waiting =
                a.waiting as i64 + b.arrived.len() as i64 - b.admitted.len() as i64 + b.preempted.len() as i64;
            assert_eq!(waiting, b.waiting as i64, "{name}: queue of step {}", b.index);
            // The KV cache only grows while nobody leaves, by at most a block a seat per step.
            if a.completed.is_empty() && b.preempted.is_empty() && b.admitted.is_empty() && b.prefill_tokens == 0 {
                let grown = b.kv_blocks_used.checked_sub(a.kv_blocks_used);
                assert!(grown.is_some_and(|g| g <= b.seats.len() as u64), "{name}: KV of step {}", b.index);
            }
            // Each seat that decoded emitted one token; none emits more.
            for s in &b.seats {
                if let Some(before) = a.seats.iter().find(|x| x.id == s.id) {
                    let decoded = before.step_tokens == 1 && !before.prefill;
                    assert!(
                        s.emitted == before.emitted + u32::from(decoded)
                            || (!decoded && s.emitted == before.emitted + 1),
                        "{name}: request {} in step {}",
                        s.id,
                        b.index
                    );
                }
            }
        }
    }
    assert!(jumps > 1000, "jumps expanded: {jumps}");
    assert!(preemptions > 0 && arrivals > 0 && completions > 0, "{preemptions} {arrivals} {completions}");
}

#[test]
fn the_window_bounds_the_trace() {
    let (_, c) = configs().next().unwrap();
    let trace = run(&c, Some(StepWindow { after_arrivals: 0, after_s: 0.0, steps: 50 }), true).step_trace;
    assert_eq!(trace.len(), 50);
    let trace = run(&c, Some(StepWindow { after_arrivals: 0, after_s: 0.0, steps: u32::MAX }), true).step_trace;
    assert!(trace.len() <= kneelab_sim::MAX_TRACED_STEPS);
}

#[test]
fn a_window_from_a_time_continues_the_trace_from_the_start() {
    // The player moves its window along a run by tracing again from a time: the steps it gets
    // are the very steps a trace from the start has there (all but a window's last, whose jump
    // the window may cut before the completions at its end: the player keeps one step fewer).
    let (_, c) = configs().next().unwrap();
    let whole = run(&c, Some(StepWindow { after_arrivals: 0, after_s: 0.0, steps: 4000 }), true).step_trace;
    for at in [1, 777, 2500, 3001, 3002, 3003] {
        let from_s = whole[at].t_s;
        let window = run(&c, Some(StepWindow { after_arrivals: 0, after_s: from_s, steps: 300 }), true).step_trace;
        assert_eq!(window.len(), 300);
        assert_eq!(window[..299], whole[at..at + 299], "from step {at}");
        // A time between two steps opens the window at the next one.
        let between =
            run(&c, Some(StepWindow { after_arrivals: 0, after_s: from_s - 1e-9, steps: 2 }), true).step_trace;
        assert_eq!(between[0], whole[at]);
    }
}

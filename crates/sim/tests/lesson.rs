//! The claims the lesson makes, checked under the page's own scenarios: every config here comes
//! from `kneelab_sim::schema` (the workloads, their SLOs, the baseline engine and the load grid the
//! page reads), so a claim is tested under the settings the reader sees.

mod common;

use common::{rag, run};
use kneelab_sim::Capacity;
use kneelab_sim::sweep::{self, SweepOptions};
use kneelab_sim::{Config, KneeRule, LoadConfig, Summary, simulate_with_capacity};

fn rag_capacity() -> Capacity {
    kneelab_sim::prepare(&rag(LoadConfig::open_offered(1.0), 1_000)).unwrap().1
}

fn at(load: f64, cap: Capacity) -> Summary {
    simulate_with_capacity(&rag(LoadConfig::open_offered(load), 10_000), cap).unwrap()
}

#[test]
fn ttft_p99_at_full_load_is_at_least_3x_that_at_85_percent() {
    let cap = rag_capacity();
    let (low, high) = (at(0.85, cap), at(1.0, cap));
    let ratio = high.ttft_s.p99 / low.ttft_s.p99;
    println!("TTFT p99: {:.2} s at 85% -> {:.2} s at 100% ({ratio:.1}x)", low.ttft_s.p99, high.ttft_s.p99);
    assert!(ratio >= 3.0, "ratio {ratio}");
    // The tail tears away from the median: the gap between them grows even faster.
    println!("TTFT p50: {:.2} s at 85% -> {:.2} s at 100%", low.ttft_s.p50, high.ttft_s.p50);
    assert!(high.ttft_s.p99 - high.ttft_s.p50 >= 3.0 * (low.ttft_s.p99 - low.ttft_s.p50));
}

#[test]
fn throughput_is_flat_past_capacity_and_goodput_collapses() {
    let cap = rag_capacity();
    // The page reads throughput and goodput side by side at the schema's overload.
    let loads = [0.7, 1.05, kneelab_sim::schema::OVERLOAD, 1.2];
    let s: Vec<Summary> = loads.iter().map(|&l| at(l, cap)).collect();
    for (l, x) in loads.iter().zip(&s) {
        println!(
            "load {l:.2}: throughput {:.3} rps, goodput {:.3} rps (capacity {:.3})",
            x.throughput_rps, x.goodput_rps, cap.rps
        );
    }
    for x in &s[1..] {
        let err = x.throughput_rps / cap.rps - 1.0;
        assert!(err.abs() <= 0.03, "throughput {} vs capacity {}", x.throughput_rps, cap.rps);
    }
    assert!(s[3].goodput_rps < s[0].goodput_rps, "goodput at 120% must be below goodput at 70%");
    assert!(s[3].goodput_rps < 0.5 * s[3].throughput_rps, "past the knee most requests miss their SLOs");
    // "At 110% throughput is still …, but goodput is …": goodput has fallen well below throughput.
    assert!(s[2].goodput_rps < 0.6 * s[2].throughput_rps, "at the overload goodput has collapsed");
}

#[test]
fn chunked_prefill_with_a_512_budget_cuts_itl_p99_at_least_2x() {
    let mut chunked = rag(LoadConfig::open_rate(3.0), 6_000);
    chunked.engine.max_num_batched_tokens = 512;
    let mut unchunked = chunked.clone();
    unchunked.engine.chunked_prefill = false;
    unchunked.engine.max_num_batched_tokens = 8192;
    let (c, u) = (run(&chunked), run(&unchunked));
    let ratio = u.itl_s.p99 / c.itl_s.p99;
    println!(
        "ITL p99: unchunked 8192 {:.1} ms, chunked 512 {:.1} ms ({ratio:.1}x)",
        u.itl_s.p99 * 1e3,
        c.itl_s.p99 * 1e3
    );
    assert!(ratio >= 2.0, "ratio {ratio}");
}

#[test]
fn a_kv_cache_too_small_for_the_batch_causes_preemptions() {
    let roomy = rag(LoadConfig::open_offered(0.9), 4_000);
    let mut tight = roomy.clone();
    tight.engine.kv_cache_tokens = 60_000; // ~16 requests of 3,100 tokens for 64 seats
    let (r, t) = (run(&roomy), run(&tight));
    println!(
        "preemptions: roomy {}, tight {}; ITL p99 {:.0} ms vs {:.0} ms",
        r.num_preemptions,
        t.num_preemptions,
        r.itl_s.p99 * 1e3,
        t.itl_s.p99 * 1e3
    );
    assert_eq!(r.num_preemptions, 0);
    assert!(t.num_preemptions > 0);
    assert!(t.kv_cache_usage_mean > r.kv_cache_usage_mean);
}

#[test]
fn a_closed_loop_at_the_same_demand_has_a_far_smaller_ttft_tail() {
    let cap = rag_capacity();
    let open = at(1.0, cap);
    let closed_config = Config {
        load: LoadConfig { offered_load: Some(1.0), users: None, ..LoadConfig::closed(1, 10.0) },
        ..rag(LoadConfig::open_offered(1.0), 10_000)
    };
    let closed = simulate_with_capacity(&closed_config, cap).unwrap();
    println!(
        "load 1.0: open TTFT p99 {:.2} s at {:.2} rps; closed ({} users) {:.2} s at {:.2} rps",
        open.ttft_s.p99,
        open.throughput_rps,
        closed.users.unwrap(),
        closed.ttft_s.p99,
        closed.throughput_rps
    );
    assert!(open.ttft_s.p99 >= 3.0 * closed.ttft_s.p99);
    // Mostly because the closed loop stopped offering load when the replica slowed down.
    assert!(closed.throughput_rps < 0.95 * open.throughput_rps);
}

#[test]
fn sweep_finds_a_knee_below_saturation() {
    let config = rag(LoadConfig::open_offered(1.0), 3_000);
    let s = sweep::sweep(&config, &page_loads(), SweepOptions::default()).unwrap();
    let knee = s.knee.expect("light load meets the SLOs");
    let sat = s.saturation.expect("throughput saturates");
    println!(
        "knee at {:.2} ({:.2} rps), saturation at {:.2}",
        knee.offered_load, knee.throughput_rps, sat.offered_load
    );
    assert!(knee.offered_load < 1.0 && knee.offered_load >= 0.5);
    assert!(knee.offered_load <= sat.offered_load);
    assert!(knee.slo_attainment >= 0.9);
    assert_eq!(s.distserve_goodput_rps, Some(knee.offered_rps));
    // Throughput rises monotonically until saturation (common random numbers keep it smooth).
    let thr: Vec<f64> = s.points.iter().map(|p| p.summary.throughput_rps).collect();
    assert!(thr.windows(2).take(7).all(|w| w[1] > w[0]), "{thr:?}");
}

/// The page's load grid (`schema::loads`): 5% to 120% of capacity, every 5%.
fn page_loads() -> Vec<f64> {
    kneelab_sim::schema::loads()
}

#[test]
fn the_attainment_knee_is_not_a_p99_knee() {
    // The page's main lab: RAG, 4,000 requests per point, 2 s TTFT and 200 ms TPOT SLOs.
    let config = rag(LoadConfig::open_offered(1.0), 4_000);
    let s = sweep::sweep(&config, &page_loads(), SweepOptions::default()).unwrap();
    let knee = s.knee.expect("light load meets the SLOs");
    let crossing = s.p99_crossing.ttft_load.expect("TTFT p99 crosses its SLO inside the sweep");
    println!(
        "attainment knee {:.2}, TTFT p99 there {:.2} s, TTFT p99 crosses 2 s at {crossing:.3}",
        knee.offered_load, knee.ttft_p99_s
    );
    // TTFT p99 passes its SLO well below the 90%-attainment knee, so at that knee a p99 SLO is
    // already broken: the page must say which percentile its knee is judged on.
    assert!(crossing < knee.offered_load, "crossing {crossing} vs knee {}", knee.offered_load);
    assert!(knee.ttft_p99_s > config.slo.ttft_ms / 1e3);

    let p99 = sweep::sweep(
        &Config { slo: kneelab_sim::SloConfig { knee: KneeRule::P99, ..config.slo.clone() }, ..config.clone() },
        &page_loads(),
        SweepOptions::default(),
    )
    .unwrap();
    let p99_knee = p99.knee.expect("light load meets a p99 SLO");
    assert_eq!(p99.knee_rule, KneeRule::P99);
    assert!(
        p99_knee.offered_load <= crossing && p99_knee.offered_load >= crossing - 0.05,
        "{p99_knee:?} vs {crossing}"
    );
    assert!(p99_knee.ttft_p99_s <= 2.0 && p99_knee.tpot_p99_s <= 0.2);
    // Each point says which p99 is within its SLO (the page reads this, not its own sum), and
    // the p99 knee is the last point before the first that is not within both.
    for p in &p99.points {
        let s = &p.summary;
        assert_eq!(p.p99_within_slo.ttft, s.ttft_s.p99 <= 2.0, "TTFT at {}", p.offered_load);
        assert_eq!(p.p99_within_slo.tpot, s.tpot_s.p99 <= 0.2, "TPOT at {}", p.offered_load);
    }
    let first_out = p99.points.iter().position(|p| !p.p99_within_slo.both()).expect("the p99s break past the knee");
    assert!(!p99.points[first_out].p99_within_slo.ttft, "TTFT's p99 is the one that breaks first");
    assert_eq!(p99.points[first_out - 1].offered_load, p99_knee.offered_load);
    // DistServe's goodput keeps its own (attainment) definition whatever the knee is judged on.
    assert_eq!(p99.distserve_goodput_rps, s.distserve_goodput_rps);
    // The saturation point is a different point, past both knees.
    let sat = s.saturation.expect("throughput saturates");
    assert!(sat.offered_load > knee.offered_load);
}

#[test]
fn below_90_percent_throughput_never_sits_above_what_arrived() {
    for (name, config) in [
        ("rag", rag(LoadConfig::open_offered(1.0), 4_000)),
        ("chat", common::chat(LoadConfig::open_offered(1.0), 4_000)),
    ] {
        let s = sweep::sweep(&config, &page_loads(), SweepOptions::default()).unwrap();
        for p in s.points.iter().filter(|p| p.offered_load < 0.9) {
            let ratio = p.summary.throughput_rps / p.offered_rps;
            assert!(
                ratio <= 1.01,
                "{name} at {}: throughput {} vs arrivals {} ({ratio:.4})",
                p.offered_load,
                p.summary.throughput_rps,
                p.offered_rps
            );
            // And the drawn rate is within a few percent of the nominal one.
            let nominal = p.summary.offered_rate_rps.unwrap();
            assert!(
                (p.offered_rps / nominal - 1.0).abs() < 0.06,
                "{name} at {}: drew {} for {nominal}",
                p.offered_load,
                p.offered_rps
            );
        }
    }
}

#[test]
fn a_step_that_carries_prefill_is_several_times_a_decode_step() {
    let cap = rag_capacity();
    let s = at(0.85, cap);
    let st = s.steps;
    println!("{st:?}");
    assert!(st.decode_only > 0 && st.with_prefill > 0, "{st:?}");
    assert!(st.with_prefill_mean_s > 4.0 * st.decode_only_mean_s, "{st:?}");
    let share = st.with_prefill as f64 / (st.decode_only + st.with_prefill) as f64;
    assert!((0.1..0.9).contains(&share), "{share}");
    // Busy time: the steps fill most of the window at 85% load, never more than all of it.
    let busy = st.decode_only as f64 * st.decode_only_mean_s + st.with_prefill as f64 * st.with_prefill_mean_s;
    assert!(busy <= s.duration_s * 1.0001 && busy > 0.5 * s.duration_s, "busy {busy} of {}", s.duration_s);
}

/// Step 5 and the CLI size from the sweep's sizing basis: on chat, where the sequence cap binds,
/// cap / time in the batch at saturation is within 15% of the saturation the engine measures.
#[test]
fn sizing_from_the_chat_sweep_lands_near_its_saturation() {
    let config = common::chat(LoadConfig::open_offered(1.0), 4_000);
    let s = sweep::sweep(&config, &page_loads(), SweepOptions::default()).unwrap();
    let basis = s.sizing.expect("the sweep saturates");
    let sat = s.saturation.unwrap();
    let at_sat = s.points.iter().find(|p| p.offered_load == sat.offered_load).unwrap();
    assert_eq!(basis.batch_s, at_sat.summary.batch_s.mean);
    assert_eq!(basis.saturation_qps, sat.throughput_rps);
    assert_eq!(basis.knee_qps, s.knee.map(|k| k.throughput_rps));
    let sizing = kneelab_sim::size(&basis.input(f64::from(config.engine.max_num_seqs), 100.0)).unwrap();
    let off = sizing.per_replica_max_qps / sat.throughput_rps - 1.0;
    println!(
        "chat: 64 / {:.2} s = {:.2} req/s against a saturation of {:.2} ({:+.1}%)",
        basis.batch_s,
        sizing.per_replica_max_qps,
        sat.throughput_rps,
        off * 100.0
    );
    assert!(off.abs() <= 0.15, "{off}");
    assert!(sizing.replicas_at_knee.unwrap() >= sizing.replicas_at_saturation.unwrap());
}

#[test]
fn the_knobs_table_says_what_its_sweeps_show() {
    const CHANGE: f64 = 1.2;
    // "On your cluster": each column of the knobs table (the schema's) swept as the page sweeps it,
    // read at the lab's default load, for both workloads. The sentence under the table states a
    // direction for each column; those directions are checked here.
    let s = kneelab_sim::schema::schema();
    let load = kneelab_sim::schema::DEFAULT_LOAD;
    for (name, workload) in [("rag", rag as fn(LoadConfig, u32) -> Config), ("chat", common::chat)] {
        let base = workload(LoadConfig::open_offered(load), kneelab_sim::schema::DEFAULT_REQUESTS);
        let col = |id: &str| {
            let c = s.lesson.knob_columns.iter().find(|c| c.id == id).unwrap();
            let config = Config { engine: c.engine.clone(), ..base.clone() };
            let sw = sweep::sweep(&config, &page_loads(), SweepOptions::default()).unwrap();
            let p =
                sw.points.iter().min_by(|a, b| (a.offered_load - load).abs().total_cmp(&(b.offered_load - load).abs()));
            (sw.capacity_rps, p.unwrap().summary.clone())
        };
        let (b_cap, b) = col("base");
        let (s_cap, small) = col("seqs");
        let (_, off) = col("nochunk");
        let (_, budget) = col("budget");
        let (kv_cap, kv) = col("kv");
        println!(
            "{name}: capacity base {b_cap:.2}, seqs {s_cap:.2}, kv {kv_cap:.2}; TPOT p99 base {:.3}, seqs {:.3}, budget {:.3}; \
             ITL p99 base {:.3}, off {:.3}; TTFT p99 base {:.3}, budget {:.3}; preemptions kv {}",
            b.tpot_s.p99,
            small.tpot_s.p99,
            budget.tpot_s.p99,
            b.itl_s.p99,
            off.itl_s.p99,
            b.ttft_s.p99,
            budget.ttft_s.p99,
            kv.num_preemptions
        );
        // The page picks each sentence's case by the same rules (`www/js/lesson/cluster.js`, a
        // change is a factor of CHANGE): under RAG every knob shows its trade; under chat, with
        // short prompts, only batching does, and the page says how little the others change.
        let batching = b_cap > CHANGE * s_cap && b.tpot_s.p99 > small.tpot_s.p99;
        let stall = off.itl_s.p99 > CHANGE * b.itl_s.p99;
        let trade = budget.tpot_s.p99 * CHANGE < b.tpot_s.p99 && budget.ttft_s.p99 > b.ttft_s.p99;
        let preempts = kv.num_preemptions > 0 && kv_cap < b_cap;
        let fits = kv.num_preemptions == 0 && kv_cap >= b_cap;
        let rag = name == "rag";
        assert!(batching, "{name}: batching");
        assert_eq!((stall, trade, preempts, fits), (rag, rag, rag, !rag), "{name}: chunking, budget, KV cache");
        // And clearly so: no case sits near the line.
        let itl = off.itl_s.p99 / b.itl_s.p99;
        assert!(if rag { itl > 2.0 * CHANGE } else { itl < 1.05 }, "{name}: ITL ratio {itl}");
    }
}

/// `examples/rag.json` (the README's run, the CLI's tests, the goldens) is the lesson's RAG lab at
/// 90%: the schema's engine, GPU, workload, SLOs and warm-up share, so its numbers are the page's.
#[test]
fn the_rag_example_is_the_lessons_rag_lab() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/rag.json")).unwrap();
    let example = Config::from_json(&text).unwrap();
    let lab = rag(LoadConfig::open_offered(0.9), 10_000);
    // The example writes its warm-up out; the lab takes the config's default share.
    assert_eq!((example.run.requests, example.run.warmup()), (lab.run.requests, lab.run.warmup()));
    assert_eq!(example, Config { seed: example.seed, run: example.run.clone(), ..lab });
}

//! The lab's live numbers as one flat map, keyed by the names the page's `data-metric`
//! attributes use, each in the Summary's unit (seconds, requests per second, counts, fractions).

use std::collections::BTreeMap;

use kneelab_sim::{Capacity, Goodput, Summary, Sweep};

/// Name -> value (`None` when not known yet, e.g. the knee before the sweep has finished).
pub type Readouts = BTreeMap<String, Option<f64>>;

/// What the current point contributes: its summary, goodput re-judged under the current SLOs,
/// and for a closed loop the open loop run at the same achieved throughput.
pub struct PointView<'a> {
    /// The run at the slider's load.
    pub summary: &'a Summary,
    /// Goodput under the SLOs in force now.
    pub goodput: Goodput,
    /// `num_requests_running` and `num_requests_waiting` when the run stopped.
    pub final_state: (u32, u32),
    /// Closed loop only: an open loop offered the closed loop's achieved throughput.
    pub open_at_same_throughput: Option<&'a Summary>,
}

/// Builds the readouts from whatever is known.
pub fn build(point: Option<PointView>, sweep: Option<&Sweep>, capacity: Option<Capacity>) -> Readouts {
    let mut r = Readouts::new();
    if let Some(p) = point {
        let s = p.summary;
        let stats =
            [("ttft", &s.ttft_s), ("tpot", &s.tpot_s), ("itl", &s.itl_s), ("e2e", &s.e2e_s), ("queue", &s.queue_s)];
        for (name, stat) in stats {
            let has = stat.count > 0;
            let v = |x: f64| has.then_some(x);
            r.insert(format!("{name}_mean"), v(stat.mean));
            r.insert(format!("{name}_p50"), v(stat.p50));
            r.insert(format!("{name}_p90"), v(stat.p90));
            r.insert(format!("{name}_p99"), v(stat.p99));
        }
        r.insert("throughput_rps".into(), Some(s.throughput_rps));
        r.insert("output_tokens_per_s".into(), Some(s.output_tokens_per_s));
        r.insert("goodput_rps".into(), Some(p.goodput.goodput_rps));
        r.insert("slo_attainment".into(), Some(p.goodput.slo_attainment));
        r.insert("num_requests_running".into(), Some(s.num_requests_running_mean));
        r.insert("num_requests_waiting".into(), Some(s.num_requests_waiting_mean));
        r.insert("num_requests_running_now".into(), Some(p.final_state.0 as f64));
        r.insert("num_requests_waiting_now".into(), Some(p.final_state.1 as f64));
        r.insert("kv_cache_usage".into(), Some(s.kv_cache_usage_mean));
        r.insert("num_preemptions".into(), Some(s.num_preemptions as f64));
        r.insert("requests_completed".into(), Some(s.requests_completed as f64));
        r.insert("duration_s".into(), Some(s.duration_s));
        r.insert("littles_l".into(), Some(s.littles_law.l));
        r.insert("littles_lambda_rps".into(), Some(s.littles_law.lambda_rps));
        r.insert("littles_w_s".into(), Some(s.littles_law.w_s));
        r.insert("littles_rel_error".into(), Some(s.littles_law.rel_error));
        r.insert("users".into(), s.users.map(f64::from));
        r.insert("offered_rps".into(), s.offered_rate_rps.or_else(|| Some(s.offered_load? * s.capacity_rps?)));
        r.insert("offered_load".into(), s.offered_load);
        r.insert("truncated".into(), Some(if s.truncated { 1.0 } else { 0.0 }));
        if let Some(open) = p.open_at_same_throughput {
            r.insert("open_same_rps".into(), open.offered_rate_rps);
            r.insert("open_same_ttft_p50".into(), Some(open.ttft_s.p50));
            r.insert("open_same_ttft_p99".into(), Some(open.ttft_s.p99));
        }
    }
    if let Some(c) = capacity {
        r.insert("capacity_rps".into(), Some(c.rps));
        r.insert("base_latency_s".into(), Some(c.base_latency_s));
    }
    if let Some(s) = sweep {
        r.insert("sweep_points".into(), Some(s.points.len() as f64));
        if let Some(k) = s.knee {
            let at_knee = s.points.iter().find(|p| p.offered_load == k.offered_load).map(|p| &p.summary);
            r.insert("knee_load".into(), Some(k.offered_load));
            r.insert("knee_rps".into(), Some(k.throughput_rps));
            r.insert("knee_goodput_rps".into(), Some(k.goodput_rps));
            r.insert("knee_e2e_s".into(), at_knee.map(|s| s.e2e_s.mean));
            r.insert("knee_running".into(), at_knee.map(|s| s.num_requests_running_mean));
        }
        r.insert("distserve_goodput_rps".into(), s.distserve_goodput_rps);
        if let Some(sat) = s.saturation {
            r.insert("saturation_load".into(), Some(sat.offered_load));
            r.insert("saturation_rps".into(), Some(sat.throughput_rps));
        }
    }
    r
}

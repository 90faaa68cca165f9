//! The lab's live numbers as one flat map, keyed by the names the page's `data-metric`
//! attributes use, each in the Summary's unit (seconds, requests per second, counts, fractions).

use std::collections::BTreeMap;

use kneelab_lab::Lab;
use kneelab_sim::{Capacity, Goodput, QueuePoint, Summary, Sweep};

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
    /// The queue's change points and the run's end, for gauges judged over a window.
    pub series: (&'a [QueuePoint], f64),
}

/// The window a dashboard judges `num_requests_waiting` over, in simulated seconds: a gauge
/// scraped once says little.
pub const GAUGE_WINDOW_S: f64 = 60.0;

/// Time-weighted mean of `num_requests_waiting` over `[from, to)`, and its maximum there.
fn waiting_over(series: &[QueuePoint], from: f64, to: f64) -> Option<(f64, u32)> {
    if to.is_nan() || from.is_nan() || to <= from {
        return None;
    }
    let (mut area, mut max, mut seen) = (0.0, 0u32, false);
    for (i, p) in series.iter().enumerate() {
        let next = series.get(i + 1).map_or(to, |n| n.t_s);
        let (a, b) = (p.t_s.max(from), next.min(to));
        if b > a {
            area += (b - a) * f64::from(p.waiting);
            max = max.max(p.waiting);
            seen = true;
        }
    }
    seen.then_some((area / (to - from), max))
}

/// Every live number the lab knows now: its point, its sweep judged under its SLOs, its
/// capacity, the timeline's shown requests, the SLOs and the load.
pub fn of_lab(lab: &mut Lab) -> Readouts {
    let slo = lab.slo();
    lab.sweep(); // fills the cache, read below alongside the point
    let lab = &*lab;
    let point = lab.point().map(|p| PointView {
        summary: &p.outcome.summary,
        goodput: p.outcome.goodput(slo),
        final_state: (p.outcome.final_state.num_requests_running, p.outcome.final_state.num_requests_waiting),
        open_at_same_throughput: p.open_at_same_throughput.as_ref(),
        series: (&p.outcome.series, p.outcome.end_s),
    });
    let mut r = build(point, lab.judged(), lab.capacity());
    if let Some(p) = lab.point() {
        // The requests the timeline shows, and how their waits compare with the run's.
        let shown = crate::charts::typical_window(&p.outcome.traces, p.outcome.summary.queue_s.mean);
        r.insert("timeline_wait_mean_s".into(), (!shown.is_empty()).then(|| crate::charts::mean_wait_s(shown)));
        r.insert("timeline_first_id".into(), shown.first().map(|t| t.id as f64));
    }
    r.insert("slo_ttft_s".into(), Some(slo.ttft_s));
    r.insert("slo_tpot_s".into(), Some(slo.tpot_s));
    r.insert("load".into(), Some(lab.load()));
    r
}

/// Builds the readouts from whatever is known.
pub fn build(point: Option<PointView<'_>>, sweep: Option<&Sweep>, capacity: Option<Capacity>) -> Readouts {
    let mut r = Readouts::new();
    if let Some(p) = point {
        let s = p.summary;
        let stats = [
            ("ttft", &s.ttft_s),
            ("tpot", &s.tpot_s),
            ("itl", &s.itl_s),
            ("e2e", &s.e2e_s),
            ("queue", &s.queue_s),
            ("batch", &s.batch_s),
        ];
        for (name, stat) in stats {
            let has = stat.count > 0;
            let v = |x: f64| has.then_some(x);
            r.insert(format!("{name}_mean"), v(stat.mean));
            r.insert(format!("{name}_p50"), v(stat.p50));
            r.insert(format!("{name}_p90"), v(stat.p90));
            r.insert(format!("{name}_p99"), v(stat.p99));
        }
        // How far the tail has torn away from the median.
        r.insert(
            "ttft_p99_over_p50".into(),
            (s.ttft_s.count > 0 && s.ttft_s.p50 > 0.0).then(|| s.ttft_s.p99 / s.ttft_s.p50),
        );
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
        let st = &s.steps;
        let all = st.decode_only + st.with_prefill;
        r.insert("decode_step_s".into(), (st.decode_only > 0).then_some(st.decode_only_mean_s));
        r.insert("prefill_step_s".into(), (st.with_prefill > 0).then_some(st.with_prefill_mean_s));
        r.insert("prefill_step_share".into(), (all > 0).then(|| st.with_prefill as f64 / all as f64));
        r.insert("requests_completed".into(), Some(s.requests_completed as f64));
        r.insert("duration_s".into(), Some(s.duration_s));
        r.insert("littles_l".into(), Some(s.littles_law.l));
        r.insert("littles_lambda_rps".into(), Some(s.littles_law.lambda_rps));
        r.insert("littles_w_s".into(), Some(s.littles_law.w_s));
        r.insert("littles_rel_error".into(), Some(s.littles_law.rel_error));
        // The same law for the batch alone: running = throughput x time in the batch.
        r.insert("littles_batch_l".into(), Some(s.littles_law_batch.l));
        r.insert("littles_batch_w_s".into(), Some(s.littles_law_batch.w_s));
        r.insert("littles_batch_rel_error".into(), Some(s.littles_law_batch.rel_error));
        r.insert("users".into(), s.users.map(f64::from));
        r.insert("offered_rps".into(), s.offered_rate_rps.or_else(|| Some(s.offered_load? * s.capacity_rps?)));
        r.insert("offered_load".into(), s.offered_load);
        r.insert(
            "arrival_rate_rps".into(),
            (s.load_mode == "open" && s.arrival_rate_rps > 0.0).then_some(s.arrival_rate_rps),
        );
        r.insert("truncated".into(), Some(if s.truncated { 1.0 } else { 0.0 }));
        // The last minute of the run, and its two halves: is the queue growing or just noise?
        let (series, end) = p.series;
        let start = series.first().map_or(end, |q| q.t_s);
        let from = (end - GAUGE_WINDOW_S).max(start);
        let mid = (from + end) / 2.0;
        if let Some((mean, max)) = waiting_over(series, from, end) {
            r.insert("waiting_window_s".into(), Some(end - from));
            r.insert("waiting_window_mean".into(), Some(mean));
            r.insert("waiting_window_max".into(), Some(f64::from(max)));
            r.insert("waiting_window_first_half".into(), waiting_over(series, from, mid).map(|w| w.0));
            r.insert("waiting_window_second_half".into(), waiting_over(series, mid, end).map(|w| w.0));
        }
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
        r.insert("attainment_target".into(), Some(s.attainment_target));
        // A knee at the sweep's highest load is no knee found: the SLOs hold all the way (a closed
        // loop's users, say, who never push the replica past them).
        let highest = s.points.iter().map(|p| p.offered_load).fold(f64::NEG_INFINITY, f64::max);
        if s.knee.is_some_and(|k| k.offered_load >= highest) {
            r.insert("knee_beyond_sweep".into(), Some(highest));
        }
        if let Some(k) = s.knee.filter(|k| k.offered_load < highest) {
            let at_knee = s.points.iter().find(|p| p.offered_load == k.offered_load).map(|p| &p.summary);
            r.insert("knee_load".into(), Some(k.offered_load));
            r.insert("knee_rps".into(), Some(k.throughput_rps));
            r.insert("knee_goodput_rps".into(), Some(k.goodput_rps));
            r.insert("knee_e2e_s".into(), at_knee.map(|s| s.e2e_s.mean));
            r.insert("knee_running".into(), at_knee.map(|s| s.num_requests_running_mean));
            r.insert("knee_batch_s".into(), at_knee.map(|s| s.batch_s.mean));
            r.insert("knee_ttft_p99_s".into(), Some(k.ttft_p99_s));
            r.insert("knee_tpot_p99_s".into(), Some(k.tpot_p99_s));
            r.insert("knee_slo_attainment".into(), Some(k.slo_attainment));
        }
        r.insert("distserve_goodput_rps".into(), s.distserve_goodput_rps);
        r.insert("ttft_p99_crossing_load".into(), s.p99_crossing.ttft_load);
        r.insert("tpot_p99_crossing_load".into(), s.p99_crossing.tpot_load);
        if let Some(sat) = s.saturation {
            r.insert("saturation_load".into(), Some(sat.offered_load));
            r.insert("saturation_rps".into(), Some(sat.throughput_rps));
            let at = s.points.iter().find(|p| p.offered_load == sat.offered_load).map(|p| &p.summary);
            // The batch time a fleet is sized with (the sweep's sizing basis).
            r.insert("saturation_batch_s".into(), s.sizing.map(|b| b.batch_s));
            r.insert("saturation_running".into(), at.map(|s| s.num_requests_running_mean));
            r.insert("saturation_e2e_s".into(), at.map(|s| s.e2e_s.mean));
        }
        let l = &s.limits;
        r.insert("limit_seq_cap_rps".into(), Some(l.seq_cap.rps));
        r.insert("limit_kv_cache_rps".into(), Some(l.kv_cache.rps));
        r.insert("limit_prefill_rps".into(), Some(l.prefill.rps));
        r.insert("limit_prefill_tokens_per_s".into(), Some(l.prefill.prefill_tokens_per_s));
        r.insert("limit_seq_cap_batch_s".into(), Some(l.seq_cap.batch_s));
        r.insert("limit_rps".into(), Some(l.rps));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_is_time_weighted_over_the_window() {
        let at = |t_s, waiting| QueuePoint { t_s, running: 1, waiting };
        // 0 waiting for 10 s, then 4 for 10 s, then 10 until the end at 30 s.
        let series = [at(0.0, 0), at(10.0, 4), at(20.0, 10)];
        assert_eq!(waiting_over(&series, 0.0, 30.0), Some((14.0 / 3.0, 10)));
        assert_eq!(waiting_over(&series, 10.0, 20.0), Some((4.0, 4)));
        assert_eq!(waiting_over(&series, 5.0, 15.0), Some((2.0, 4)));
        assert_eq!(waiting_over(&series, 30.0, 30.0), None);
        assert_eq!(waiting_over(&[], 0.0, 1.0), None);
    }
}

//! The lab's live numbers as one flat map, keyed by the names the page's `data-metric`
//! attributes use, each in the Summary's unit (seconds, requests per second, counts, fractions).

use kneelab_lab::Lab;
use kneelab_sim::{Capacity, Goodput, QueuePoint, Summary, Sweep};
use serde::ser::{Serialize, Serializer};

/// Name -> value (`None` when not known yet, e.g. the knee before the sweep has finished), in the
/// order first set; it crosses to JS as an object. A list rather than a `BTreeMap`: about 80
/// names, and the map's code (about 1.5 KB gzipped) would be in the page's wasm for this alone.
#[derive(Debug, Default)]
pub struct Readouts(Vec<(&'static str, Option<f64>)>);

impl Readouts {
    fn new() -> Readouts {
        Readouts::default()
    }

    /// Sets `name` to `value`, in place if it is set already.
    pub(crate) fn insert(&mut self, name: &'static str, value: Option<f64>) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = value,
            None => self.0.push((name, value)),
        }
    }

    /// The value of `name`: `None` if it is not set, `Some(None)` if it is set but not known yet.
    #[cfg(test)]
    fn get(&self, name: &str) -> Option<Option<f64>> {
        self.0.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }
}

impl Serialize for Readouts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (name, value)))
    }
}

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
        r.insert("timeline_wait_mean_s", (!shown.is_empty()).then(|| crate::charts::mean_wait_s(shown)));
        r.insert("timeline_first_id", shown.first().map(|t| t.id as f64));
    }
    r.insert("slo_ttft_s", Some(slo.ttft_s));
    r.insert("slo_tpot_s", Some(slo.tpot_s));
    r.insert("load", Some(lab.load()));
    r
}

/// Builds the readouts from whatever is known.
pub fn build(point: Option<PointView<'_>>, sweep: Option<&Sweep>, capacity: Option<Capacity>) -> Readouts {
    let mut r = Readouts::new();
    if let Some(p) = point {
        let s = p.summary;
        let stats = [
            (["ttft_mean", "ttft_p50", "ttft_p90", "ttft_p99"], &s.ttft_s),
            (["tpot_mean", "tpot_p50", "tpot_p90", "tpot_p99"], &s.tpot_s),
            (["itl_mean", "itl_p50", "itl_p90", "itl_p99"], &s.itl_s),
            (["e2e_mean", "e2e_p50", "e2e_p90", "e2e_p99"], &s.e2e_s),
            (["queue_mean", "queue_p50", "queue_p90", "queue_p99"], &s.queue_s),
            (["batch_mean", "batch_p50", "batch_p90", "batch_p99"], &s.batch_s),
        ];
        for (names, stat) in stats {
            let has = stat.count > 0;
            for (name, x) in names.into_iter().zip([stat.mean, stat.p50, stat.p90, stat.p99]) {
                r.insert(name, has.then_some(x));
            }
        }
        // How far the tail has torn away from the median.
        r.insert("ttft_p99_over_p50", (s.ttft_s.count > 0 && s.ttft_s.p50 > 0.0).then(|| s.ttft_s.p99 / s.ttft_s.p50));
        r.insert("throughput_rps", Some(s.throughput_rps));
        r.insert("output_tokens_per_s", Some(s.output_tokens_per_s));
        r.insert("goodput_rps", Some(p.goodput.goodput_rps));
        r.insert("slo_attainment", Some(p.goodput.slo_attainment));
        r.insert("num_requests_running", Some(s.num_requests_running_mean));
        r.insert("num_requests_waiting", Some(s.num_requests_waiting_mean));
        r.insert("num_requests_running_now", Some(p.final_state.0 as f64));
        r.insert("num_requests_waiting_now", Some(p.final_state.1 as f64));
        r.insert("kv_cache_usage", Some(s.kv_cache_usage_mean));
        r.insert("num_preemptions", Some(s.num_preemptions as f64));
        let st = &s.steps;
        let all = st.decode_only + st.with_prefill;
        r.insert("decode_step_s", (st.decode_only > 0).then_some(st.decode_only_mean_s));
        r.insert("prefill_step_s", (st.with_prefill > 0).then_some(st.with_prefill_mean_s));
        r.insert("prefill_step_share", (all > 0).then(|| st.with_prefill as f64 / all as f64));
        r.insert("requests_completed", Some(s.requests_completed as f64));
        r.insert("duration_s", Some(s.duration_s));
        r.insert("littles_l", Some(s.littles_law.l));
        r.insert("littles_lambda_rps", Some(s.littles_law.lambda_rps));
        r.insert("littles_w_s", Some(s.littles_law.w_s));
        r.insert("littles_rel_error", Some(s.littles_law.rel_error));
        // The same law for the batch alone: running = throughput x time in the batch.
        r.insert("littles_batch_l", Some(s.littles_law_batch.l));
        r.insert("littles_batch_w_s", Some(s.littles_law_batch.w_s));
        r.insert("littles_batch_rel_error", Some(s.littles_law_batch.rel_error));
        r.insert("users", s.users.map(f64::from));
        r.insert("offered_rps", s.offered_rate_rps.or_else(|| Some(s.offered_load? * s.capacity_rps?)));
        r.insert("offered_load", s.offered_load);
        r.insert("arrival_rate_rps", (s.load_mode == "open" && s.arrival_rate_rps > 0.0).then_some(s.arrival_rate_rps));
        r.insert("truncated", Some(if s.truncated { 1.0 } else { 0.0 }));
        // The last minute of the run, and its two halves: is the queue growing or just noise?
        let (series, end) = p.series;
        let start = series.first().map_or(end, |q| q.t_s);
        let from = (end - GAUGE_WINDOW_S).max(start);
        let mid = (from + end) / 2.0;
        if let Some((mean, max)) = waiting_over(series, from, end) {
            r.insert("waiting_window_s", Some(end - from));
            r.insert("waiting_window_mean", Some(mean));
            r.insert("waiting_window_max", Some(f64::from(max)));
            r.insert("waiting_window_first_half", waiting_over(series, from, mid).map(|w| w.0));
            r.insert("waiting_window_second_half", waiting_over(series, mid, end).map(|w| w.0));
        }
        if let Some(open) = p.open_at_same_throughput {
            r.insert("open_same_rps", open.offered_rate_rps);
            r.insert("open_same_ttft_p50", Some(open.ttft_s.p50));
            r.insert("open_same_ttft_p99", Some(open.ttft_s.p99));
        }
    }
    if let Some(c) = capacity {
        r.insert("capacity_rps", Some(c.rps));
        r.insert("base_latency_s", Some(c.base_latency_s));
    }
    if let Some(s) = sweep {
        r.insert("sweep_points", Some(s.points.len() as f64));
        r.insert("attainment_target", Some(s.attainment_target));
        // A knee at the sweep's highest load is no knee found: the SLOs hold all the way (a closed
        // loop's users, say, who never push the replica past them).
        let highest = s.points.iter().map(|p| p.offered_load).fold(f64::NEG_INFINITY, f64::max);
        if s.knee.is_some_and(|k| k.offered_load >= highest) {
            r.insert("knee_beyond_sweep", Some(highest));
        }
        if let Some(k) = s.knee.filter(|k| k.offered_load < highest) {
            let at_knee = s.points.iter().find(|p| p.offered_load == k.offered_load).map(|p| &p.summary);
            r.insert("knee_load", Some(k.offered_load));
            r.insert("knee_rps", Some(k.throughput_rps));
            r.insert("knee_goodput_rps", Some(k.goodput_rps));
            r.insert("knee_e2e_s", at_knee.map(|s| s.e2e_s.mean));
            r.insert("knee_running", at_knee.map(|s| s.num_requests_running_mean));
            r.insert("knee_batch_s", at_knee.map(|s| s.batch_s.mean));
            r.insert("knee_ttft_p99_s", Some(k.ttft_p99_s));
            r.insert("knee_tpot_p99_s", Some(k.tpot_p99_s));
            r.insert("knee_slo_attainment", Some(k.slo_attainment));
        }
        r.insert("distserve_goodput_rps", s.distserve_goodput_rps);
        r.insert("ttft_p99_crossing_load", s.p99_crossing.ttft_load);
        r.insert("tpot_p99_crossing_load", s.p99_crossing.tpot_load);
        if let Some(sat) = s.saturation {
            r.insert("saturation_load", Some(sat.offered_load));
            r.insert("saturation_rps", Some(sat.throughput_rps));
            let at = s.points.iter().find(|p| p.offered_load == sat.offered_load).map(|p| &p.summary);
            // The batch time a fleet is sized with (the sweep's sizing basis).
            r.insert("saturation_batch_s", s.sizing.map(|b| b.batch_s));
            r.insert("saturation_running", at.map(|s| s.num_requests_running_mean));
            r.insert("saturation_e2e_s", at.map(|s| s.e2e_s.mean));
        }
        let l = &s.limits;
        r.insert("limit_seq_cap_rps", Some(l.seq_cap.rps));
        r.insert("limit_kv_cache_rps", Some(l.kv_cache.rps));
        r.insert("limit_prefill_rps", Some(l.prefill.rps));
        r.insert("limit_prefill_tokens_per_s", Some(l.prefill.prefill_tokens_per_s));
        r.insert("limit_seq_cap_batch_s", Some(l.seq_cap.batch_s));
        r.insert("limit_rps", Some(l.rps));
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

    #[test]
    fn a_name_set_again_keeps_its_place_and_takes_the_new_value() {
        let mut r = Readouts::new();
        r.insert("a", Some(1.0));
        r.insert("b", None);
        r.insert("a", Some(2.0));
        assert_eq!((r.get("a"), r.get("b"), r.get("c")), (Some(Some(2.0)), Some(None), None));
        assert_eq!(r.0.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn capacity_and_nothing_else_before_a_point_or_a_sweep() {
        let c = Capacity { rps: 4.0, base_latency_s: 1.5, completions_counted: 10, window_s: 2.5 };
        let r = build(None, None, Some(c));
        assert_eq!(r.0, [("capacity_rps", Some(4.0)), ("base_latency_s", Some(1.5))]);
    }
}

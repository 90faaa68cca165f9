//! Canvas plumbing for kneelab-plot's charts: HiDPI backing stores, and the chart data built from
//! the lab's sweep and current run.

use kneelab_lab::Lab;
use kneelab_plot::plotters::coord::Shift;
use kneelab_plot::plotters::prelude::*;
#[cfg(any(feature = "lesson", feature = "player", test))]
use kneelab_plot::replica;
use kneelab_plot::{Chrome, DrawResult, Style, format_percent, latency, queue, tail, throughput, timeline};
#[cfg(any(feature = "lesson", feature = "player", test))]
use kneelab_sim::Snapshot;
use kneelab_sim::{QueuePoint, Sweep, Trace};
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

use crate::boundary::{Fault, Kind};

/// Sizes `canvas`'s backing store to its CSS size times the device pixel ratio (plotters does not
/// do HiDPI), then draws with `f`. Returns `false` without drawing when the canvas is not laid out.
pub fn draw_on(
    canvas: &HtmlCanvasElement,
    dark: bool,
    chrome: Chrome,
    f: impl FnOnce(&DrawingArea<CanvasBackend, Shift>, &Style) -> DrawResult<CanvasBackend>,
) -> Result<bool, Fault> {
    let (css_w, css_h) = (canvas.client_width(), canvas.client_height());
    if css_w <= 0 || css_h <= 0 {
        return Ok(false);
    }
    let dpr =
        web_sys::window().map(|w| w.device_pixel_ratio()).filter(|d| d.is_finite()).unwrap_or(1.0).clamp(1.0, 4.0);
    let (w, h) = ((css_w as f64 * dpr).round() as u32, (css_h as f64 * dpr).round() as u32);
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    let backend = CanvasBackend::with_canvas_object(canvas.clone())
        .ok_or_else(|| Fault::new("canvas", Kind::Internal, "the canvas has no 2D context"))?;
    let area = backend.into_drawing_area();
    let style = if dark { Style::dark(dpr) } else { Style::light(dpr) }.with_chrome(chrome);
    f(&area, &style).map_err(|e| Fault::general(Kind::Internal, format!("drawing failed: {e}")))?;
    area.present().map_err(|e| Fault::general(Kind::Internal, format!("drawing failed: {e}")))?;
    Ok(true)
}

/// The slider's position and the live numbers at it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Marker {
    /// Offered load (fraction of capacity).
    pub load: Option<f64>,
    /// Live TTFT p50 and p99.
    pub p50_s: Option<f64>,
    /// Live TTFT p99.
    pub p99_s: Option<f64>,
    /// Live throughput.
    pub throughput_rps: Option<f64>,
    /// Live goodput.
    pub goodput_rps: Option<f64>,
}

impl Marker {
    /// The lab's slider position and its live numbers (the load alone before the run is back).
    pub fn of(lab: &Lab) -> Marker {
        let Some(p) = lab.point() else {
            return Marker { load: (lab.load() > 0.0).then_some(lab.load()), ..Marker::default() };
        };
        let s = &p.outcome.summary;
        Marker {
            load: Some(p.load),
            p50_s: Some(s.ttft_s.p50),
            p99_s: Some(s.ttft_s.p99),
            throughput_rps: Some(s.throughput_rps),
            goodput_rps: Some(p.outcome.goodput(lab.slo()).goodput_rps),
        }
    }
}

/// One chart's data, ready to draw.
pub enum ChartData {
    /// TTFT p50/p99 against load.
    Latency(latency::LatencyData),
    /// Throughput and goodput against load.
    Throughput(throughput::ThroughputData),
    /// `num_requests_running` / `num_requests_waiting` over the run.
    Queue(queue::QueueData),
    /// A few requests' two clocks.
    Timeline(timeline::TimelineData),
    /// Goodput against the TTFT SLO.
    Goodput(kneelab_plot::goodput_slo::GoodputSloData),
    /// The replica's limits.
    Limits(kneelab_plot::limits::LimitsData),
    /// TTFT by percentile.
    Tail(tail::TailData),
}

impl ChartData {
    /// The data of the chart named `name` (one of `schema::PANELS`) for the lab as it is now.
    pub fn of(lab: &mut Lab, name: &str, scale: latency::YScale) -> Option<ChartData> {
        let (marker, slo) = (Marker::of(lab), lab.slo());
        Some(match name {
            "latency" => {
                lab.open_sweep_for_compare(); // fills the cache, read below alongside the sweep
                lab.sweep();
                let compare = lab.judged_open().map(|s| (s, "p99 open loop"));
                ChartData::Latency(latency_data(lab.judged(), compare, marker, slo.ttft_s, scale))
            }
            "throughput" => ChartData::Throughput(throughput_data(lab.sweep(), marker)),
            "limits" => ChartData::Limits(limits_data(lab.sweep())),
            "tail" => {
                let current = lab.point().map(|p| (p.load, p.outcome.request_samples.ttft_s()));
                ChartData::Tail(tail_data(&lab.compare_samples(), current, slo.ttft_s))
            }
            "queue" => {
                let seqs = lab.config().engine.max_num_seqs;
                ChartData::Queue(match lab.point() {
                    Some(p) => queue_data(&p.outcome.series, p.outcome.end_s, seqs),
                    None => queue_data(&[], 0.0, seqs),
                })
            }
            "timeline" => ChartData::Timeline(
                lab.point()
                    .map(|p| timeline_data(&p.outcome.traces, p.outcome.summary.queue_s.mean))
                    .unwrap_or_default(),
            ),
            "goodput" => ChartData::Goodput(goodput_slo_data(lab)),
            _ => return None,
        })
    }

    /// Draws it.
    pub fn draw(&self, area: &DrawingArea<CanvasBackend, Shift>, style: &Style) -> DrawResult<CanvasBackend> {
        match self {
            ChartData::Latency(d) => latency::draw(area, d, style),
            ChartData::Throughput(d) => throughput::draw(area, d, style),
            ChartData::Queue(d) => queue::draw(area, d, style),
            ChartData::Timeline(d) => timeline::draw(area, d, style),
            ChartData::Goodput(d) => kneelab_plot::goodput_slo::draw(area, d, style),
            ChartData::Limits(d) => kneelab_plot::limits::draw(area, d, style),
            ChartData::Tail(d) => tail::draw(area, d, style),
        }
    }
}

/// Goodput against the TTFT SLO for the lab's current run (the TPOT SLO held).
pub fn goodput_slo_data(lab: &Lab) -> kneelab_plot::goodput_slo::GoodputSloData {
    let mut data = kneelab_plot::goodput_slo::GoodputSloData::default();
    if let Some(p) = lab.point() {
        for (slo_s, goodput_rps) in lab.goodput_by_ttft_slo() {
            data.slo_s.push(slo_s);
            data.goodput_rps.push(goodput_rps);
            data.throughput_rps.push(p.outcome.summary.throughput_rps);
        }
        data.current_slo_s = Some(lab.slo().ttft_s);
    }
    data
}

/// The knee to mark: none when even the highest load meets the target (the knee lies beyond
/// the chart, and a line at its edge would say otherwise).
fn knee_to_mark(sweep: Option<&Sweep>) -> Option<f64> {
    let sweep = sweep?;
    let knee = sweep.knee?;
    let highest = sweep.points.iter().map(|p| p.offered_load).fold(f64::NEG_INFINITY, f64::max);
    (knee.offered_load < highest).then_some(knee.offered_load)
}

/// TTFT p50/p99 against offered load; `compare` is another sweep whose p99 is drawn faintly
/// (the open loop's, while the lab shows a closed one).
pub fn latency_data(
    sweep: Option<&Sweep>,
    compare: Option<(&Sweep, &str)>,
    marker: Marker,
    slo_ttft_s: f64,
    y_scale: latency::YScale,
) -> latency::LatencyData {
    let points = sweep.map(|s| &s.points[..]).unwrap_or_default();
    let (compare_points, compare_label) = compare.map_or((&[][..], ""), |(s, label)| (&s.points[..], label));
    latency::LatencyData {
        compare_loads: compare_points.iter().map(|p| p.offered_load).collect(),
        compare_p99_s: compare_points.iter().map(|p| p.summary.ttft_s.p99).collect(),
        compare_label: compare_label.to_string(),
        metric_label: "TTFT".into(),
        loads: points.iter().map(|p| p.offered_load).collect(),
        p50_s: points.iter().map(|p| p.summary.ttft_s.p50).collect(),
        p99_s: points.iter().map(|p| p.summary.ttft_s.p99).collect(),
        mean_s: points.iter().map(|p| p.summary.ttft_s.mean).collect(),
        // An open loop past capacity has no steady state; a closed one throttles itself.
        unsteady_from: points.first().filter(|p| p.summary.load_mode == "open").map(|_| 1.0),
        closed_loop: points.first().is_some_and(|p| p.summary.load_mode == "closed"),
        y_scale,
        slo_s: Some(slo_ttft_s),
        current_load: marker.load,
        current_p50_s: marker.p50_s,
        current_p99_s: marker.p99_s,
        knee_load: knee_to_mark(sweep),
        ..Default::default()
    }
}

/// Throughput and goodput against offered load.
pub fn throughput_data(sweep: Option<&Sweep>, marker: Marker) -> throughput::ThroughputData {
    let points = sweep.map(|s| &s.points[..]).unwrap_or_default();
    throughput::ThroughputData {
        loads: points.iter().map(|p| p.offered_load).collect(),
        throughput_rps: points.iter().map(|p| p.summary.throughput_rps).collect(),
        goodput_rps: points.iter().map(|p| p.summary.goodput_rps).collect(),
        offered_rps: points.iter().map(|p| p.offered_rps).collect(),
        capacity_rps: sweep.map(|s| s.capacity_rps),
        current_load: marker.load,
        current_throughput_rps: marker.throughput_rps,
        current_goodput_rps: marker.goodput_rps,
        current_label: None,
        knee_load: knee_to_mark(sweep),
        closed_loop: points.first().is_some_and(|p| p.summary.load_mode == "closed"),
    }
}

/// The replica's limits beside its measured capacity (the saturated closed loop).
pub fn limits_data(sweep: Option<&Sweep>) -> kneelab_plot::limits::LimitsData {
    use kneelab_plot::limits::{Bar, LimitsData};
    use kneelab_sim::LimitKind;
    let Some(s) = sweep else { return LimitsData::default() };
    let l = &s.limits;
    let rows = [
        (LimitKind::SeqCap, "sequence cap", "seq cap", l.seq_cap.rps),
        (LimitKind::KvCache, "KV cache", "KV", l.kv_cache.rps),
        (LimitKind::Prefill, "prefill", "prefill", l.prefill.rps),
    ];
    LimitsData {
        bars: rows
            .iter()
            .map(|&(_, label, short, rps)| Bar { label: label.into(), short_label: short.into(), rps })
            .collect(),
        binding: rows.iter().position(|r| r.0 == l.binding),
        measured_rps: Some(s.capacity_rps),
    }
}

/// The most points a queue chart gets: more than a wide canvas has pixels is wasted work.
const QUEUE_BUCKETS: usize = 480;

/// `num_requests_running` and `num_requests_waiting` over simulated time, time-averaged into
/// buckets so short spikes keep their weight without drawing every change.
pub fn queue_data(series: &[QueuePoint], end_s: f64, max_num_seqs: u32) -> queue::QueueData {
    let mut data = queue::QueueData { max_num_seqs: Some(max_num_seqs as f64), ..Default::default() };
    let Some(first) = series.first() else { return data };
    let (t0, t1) = (first.t_s, end_s.max(first.t_s));
    if t1 <= t0 {
        return data;
    }
    let width = (t1 - t0) / QUEUE_BUCKETS as f64;
    let mut running = vec![0.0; QUEUE_BUCKETS];
    let mut waiting = vec![0.0; QUEUE_BUCKETS];
    let edge = |b: usize| if b >= QUEUE_BUCKETS { t1 } else { t0 + b as f64 * width };
    let bucket = |t: f64| (((t - t0) / width) as usize).min(QUEUE_BUCKETS - 1);
    for (i, p) in series.iter().enumerate() {
        // The state holds from this change to the next: spread it over the buckets it overlaps.
        let (from, until) = (p.t_s, series.get(i + 1).map_or(t1, |n| n.t_s).min(t1));
        if until <= from {
            continue;
        }
        for b in bucket(from)..=bucket(until) {
            let overlap = until.min(edge(b + 1)) - from.max(edge(b));
            if overlap > 0.0 {
                running[b] += p.running as f64 * overlap;
                waiting[b] += p.waiting as f64 * overlap;
            }
        }
    }
    data.t_s = (0..QUEUE_BUCKETS).map(|b| t0 + (b as f64 + 0.5) * width).collect();
    data.running = running.iter().map(|a| a / width).collect();
    data.waiting = waiting.iter().map(|a| a / width).collect();
    data
}

/// TTFT by percentile at the lesson's two compared loads (from the sweep, when their points are
/// done) and at the slider's load, on a y axis fixed by the higher reference's p99.9, so a drag
/// from one load to the other moves the bold curve, never the axes.
pub fn tail_data(references: &[(f64, &[f64])], current: Option<(f64, &[f64])>, slo_s: f64) -> tail::TailData {
    let grid = tail::percentile_grid();
    let curve = |label: String, samples: &[f64]| tail::TailCurve {
        label,
        percentiles: grid.clone(),
        seconds: kneelab_sim::stats::quantiles(samples, &grid),
    };
    let references: Vec<tail::TailCurve> = references
        .iter()
        .filter(|(_, samples)| !samples.is_empty())
        .map(|&(load, samples)| curve(format_percent(load), samples))
        .collect();
    // Headroom above the highest reference's p99.9 (the last grid point).
    let y_max_s = references
        .iter()
        .filter_map(|c| c.seconds.last())
        .copied()
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    tail::TailData {
        metric_label: "TTFT".into(),
        references,
        current: current
            .filter(|(_, s)| !s.is_empty())
            .map(|(load, s)| curve(format!("now {}", format_percent(load)), s)),
        slo_s: Some(slo_s),
        y_max_s: y_max_s.map(|m| (m * 1.1).max(slo_s * 1.2)),
    }
}

/// A step snapshot as the replica chart draws it.
#[cfg(any(feature = "lesson", feature = "player", test))]
pub fn replica_data(s: &Snapshot) -> replica::ReplicaData {
    let kind = |seat: &kneelab_sim::Seat| match (seat.step_tokens, seat.prefill) {
        (0, _) => replica::SeatKind::Idle,
        (_, true) => replica::SeatKind::Prefill,
        (_, false) => replica::SeatKind::Decode,
    };
    replica::ReplicaData {
        max_num_seqs: s.max_num_seqs,
        seats: s.seats.iter().map(kind).collect(),
        waiting: s.waiting,
        budget_tokens: s.max_num_batched_tokens,
        decode_tokens: s.decode_tokens,
        prefill_tokens: s.prefill_tokens,
        kv_usage: if s.kv_blocks > 0 { s.kv_blocks_used as f64 / s.kv_blocks as f64 } else { 0.0 },
        ..replica::ReplicaData::default()
    }
}

/// An iteration of a step trace as the played replica chart draws it, `phase` (0-1) of the way
/// through: the TTFT clocks run to that instant, against `ttft_slo_s`.
#[cfg(any(feature = "player", test))]
pub fn replica_step_data(s: &Snapshot, ttft_slo_s: f64, phase: f64) -> replica::ReplicaData {
    let now = s.t_s + phase.clamp(0.0, 1.0) * s.duration_s;
    let share = |t: f64| t / ttft_slo_s;
    replica::ReplicaData {
        step: Some(replica::StepLabel { index: s.index, t_s: s.t_s, duration_s: s.duration_s }),
        seat_clocks: s
            .seats
            .iter()
            .map(|seat| match seat.first_token_s {
                Some(first) => replica::TtftClock::Done(share(first - seat.arrival_s)),
                None => replica::TtftClock::Running(share(now - seat.arrival_s)),
            })
            .collect(),
        waiting_clocks: s.waiting_s.iter().map(|w| replica::TtftClock::Running(share(w + (now - s.t_s)))).collect(),
        arrived: s.arrived.len() as u32,
        preempted: s.preempted.len() as u32,
        completed: s.completed.len() as u32,
        phase,
        ..replica_data(s)
    }
}

/// Requests the timeline shows: this many consecutive ones.
pub const TIMELINE_SHOWN: usize = 6;

/// Out of a pool of consecutive traces, the [`TIMELINE_SHOWN`] consecutive finished ones whose
/// mean queue wait is nearest `typical_wait_s` (the run's mean wait): requests that waited as
/// requests at this load do, not whichever happened to come first.
pub fn typical_window(traces: &[Trace], typical_wait_s: f64) -> &[Trace] {
    let n = TIMELINE_SHOWN.min(traces.len());
    let finished = |t: &Trace| t.finish_s.is_finite() && t.finish_s >= t.arrival_s && !t.token_times_s.is_empty();
    let gap = |i: usize| (mean_wait_s(&traces[i..i + n]) - typical_wait_s).abs();
    (0..=traces.len() - n)
        .filter(|&i| traces[i..i + n].iter().all(finished))
        .min_by(|&a, &b| gap(a).total_cmp(&gap(b)))
        .map_or(&traces[..n], |i| &traces[i..i + n])
}

/// Mean queue wait (arrival to first scheduled) of `traces`; NaN for none.
pub fn mean_wait_s(traces: &[Trace]) -> f64 {
    traces.iter().map(|t| t.scheduled_s - t.arrival_s).sum::<f64>() / traces.len() as f64
}

/// The timeline of the traces [`typical_window`] picks, times measured from the first one's
/// arrival.
pub fn timeline_data(traces: &[Trace], typical_wait_s: f64) -> timeline::TimelineData {
    let shown = typical_window(traces, typical_wait_s);
    let t0 = shown.first().map_or(0.0, |t| t.arrival_s);
    let requests: Vec<timeline::RequestTrace> = shown
        .iter()
        .take(timeline::MAX_ROWS)
        .map(|t| timeline::RequestTrace {
            label: format!("req {}", t.id),
            arrival_s: t.arrival_s - t0,
            scheduled_s: t.scheduled_s - t0,
            first_token_s: t.first_token_s - t0,
            token_times_s: t.token_times_s.iter().map(|x| x - t0).collect(),
            finish_s: t.finish_s - t0,
        })
        .collect();
    // Bracket TTFT and TPOT on the request that waited longest: queueing is part of TTFT.
    let highlight = requests
        .iter()
        .enumerate()
        .max_by(|a, b| (a.1.scheduled_s - a.1.arrival_s).total_cmp(&(b.1.scheduled_s - b.1.arrival_s)))
        .map(|(i, _)| i);
    timeline::TimelineData { requests, highlight }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_panel_the_schema_offers_has_a_chart() {
        use kneelab_sim::{LoadConfig, WorkloadPreset, schema};
        let mut lab = Lab::new(schema::lesson_config(WorkloadPreset::Rag, LoadConfig::default(), 600)).unwrap();
        lab.run_point().unwrap();
        lab.sweep_step().unwrap();
        for name in schema::PANELS.into_iter().filter(|&p| p != schema::PLAYER_PANEL) {
            assert!(ChartData::of(&mut lab, name, latency::YScale::Linear).is_some(), "{name}");
        }
        assert!(schema::DEFAULT_PANELS.iter().all(|p| schema::PANELS.contains(p)));
        assert!(schema::PANELS.contains(&schema::PLAYER_PANEL));
        assert!(
            ChartData::of(&mut lab, schema::PLAYER_PANEL, latency::YScale::Linear).is_none(),
            "the player draws it"
        );
        assert!(ChartData::of(&mut lab, "pie", latency::YScale::Linear).is_none());
    }

    #[test]
    fn a_traced_step_runs_its_clocks_to_the_phase() {
        use kneelab_sim::Seat;
        let seat = |id, first_token_s| Seat { id, arrival_s: 1.0, first_token_s, step_tokens: 1, ..Seat::default() };
        let step = Snapshot {
            t_s: 2.0,
            duration_s: 1.0,
            index: 7,
            seats: vec![seat(1, Some(1.5)), seat(2, None)],
            waiting: 1,
            waiting_s: vec![0.25],
            arrived: vec![(3, 1.75)],
            completed: vec![1],
            ..Snapshot::default()
        };
        let (start, end) = (replica_step_data(&step, 2.0, 0.0), replica_step_data(&step, 2.0, 1.0));
        use replica::TtftClock::{Done, Running};
        assert_eq!(start.seat_clocks, [Done(0.25), Running(0.5)]);
        assert_eq!(end.seat_clocks, [Done(0.25), Running(1.0)]);
        assert_eq!(start.waiting_clocks, [Running(0.125)]);
        assert_eq!(end.waiting_clocks, [Running(0.625)]);
        assert_eq!((start.arrived, start.completed, start.preempted), (1, 1, 0));
        assert_eq!(start.step.map(|s| s.index), Some(7));
    }

    #[test]
    fn queue_buckets_are_time_averages() {
        // 2 running for the first half, 4 for the second; waiting 0 then 10.
        let series =
            [QueuePoint { t_s: 0.0, running: 2, waiting: 0 }, QueuePoint { t_s: 50.0, running: 4, waiting: 10 }];
        let d = queue_data(&series, 100.0, 8);
        assert_eq!(d.t_s.len(), QUEUE_BUCKETS);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!((mean(&d.running) - 3.0).abs() < 1e-9);
        assert!((mean(&d.waiting) - 5.0).abs() < 1e-9);
        assert!((d.running[0] - 2.0).abs() < 1e-9);
        assert!((d.waiting.last().unwrap() - 10.0).abs() < 1e-9);
    }

    #[test]
    fn empty_or_instant_series_give_empty_data() {
        assert!(queue_data(&[], 10.0, 8).t_s.is_empty());
        assert!(queue_data(&[QueuePoint { t_s: 5.0, running: 1, waiting: 0 }], 5.0, 8).t_s.is_empty());
    }

    fn trace(id: u64, arrival_s: f64, wait_s: f64, finished: bool) -> Trace {
        let scheduled_s = arrival_s + wait_s;
        Trace {
            id,
            arrival_s,
            scheduled_s,
            first_token_s: scheduled_s + 0.1,
            token_times_s: if finished { vec![scheduled_s + 0.1, scheduled_s + 0.2] } else { vec![] },
            finish_s: if finished { scheduled_s + 0.2 } else { 0.0 },
            ..Trace::default()
        }
    }

    #[test]
    fn the_timeline_shows_the_window_whose_waits_are_typical() {
        // Ten quiet requests, then six that waited about 1 s, then more quiet ones.
        let traces: Vec<Trace> =
            (0..24).map(|i| trace(i, i as f64, if (10..16).contains(&i) { 1.0 } else { 0.0 }, true)).collect();
        let shown = typical_window(&traces, 1.0);
        assert_eq!(shown.iter().map(|t| t.id).collect::<Vec<_>>(), [10, 11, 12, 13, 14, 15]);
        assert!((mean_wait_s(shown) - 1.0).abs() < 1e-12);
        // A quiet run shows quiet requests: the first window that matches.
        assert_eq!(typical_window(&traces, 0.0)[0].id, 0);
        let data = timeline_data(&traces, 1.0);
        assert_eq!(data.requests.len(), TIMELINE_SHOWN);
        assert_eq!(data.requests[0].arrival_s, 0.0);
    }

    #[test]
    fn the_timeline_window_skips_unfinished_requests_and_copes_with_few() {
        let mut traces: Vec<Trace> = (0..8).map(|i| trace(i, i as f64, 0.5, true)).collect();
        traces[1] = trace(1, 1.0, 0.5, false);
        assert_eq!(typical_window(&traces, 0.5)[0].id, 2);
        assert_eq!(typical_window(&traces[..3], 0.5).len(), 3);
        assert!(typical_window(&[], 0.5).is_empty());
    }
}

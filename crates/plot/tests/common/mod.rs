//! Shared by the integration tests: realistic data for each chart and an SVG renderer.

#![allow(dead_code)] // each test binary uses a different part of this module

use kneelab_plot::goodput_slo::GoodputSloData;
use kneelab_plot::latency::LatencyData;
use kneelab_plot::limits::LimitsData;
use kneelab_plot::queue::QueueData;
use kneelab_plot::replica::{ReplicaData, SeatKind};
use kneelab_plot::tail::{TailCurve, TailData};
use kneelab_plot::throughput::ThroughputData;
use kneelab_plot::timeline::{RequestTrace, TimelineData};
use kneelab_plot::{DrawResult, Style, goodput_slo, latency, limits, queue, replica, tail, throughput, timeline};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_svg::SVGBackend;

/// Any chart with its data, so a test case is a row.
#[derive(Clone, Debug)]
pub enum Chart {
    Latency(LatencyData),
    Throughput(ThroughputData),
    Queue(QueueData),
    Timeline(TimelineData),
    GoodputSlo(GoodputSloData),
    Limits(LimitsData),
    Tail(TailData),
    Replica(ReplicaData),
}

impl Chart {
    pub fn name(&self) -> &'static str {
        match self {
            Chart::Latency(_) => "latency",
            Chart::Throughput(_) => "throughput",
            Chart::Queue(_) => "queue",
            Chart::Timeline(_) => "timeline",
            Chart::GoodputSlo(_) => "goodput_slo",
            Chart::Limits(_) => "limits",
            Chart::Tail(_) => "tail",
            Chart::Replica(_) => "replica",
        }
    }

    /// Draws it on `area`.
    pub fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, style: &Style) -> DrawResult<DB> {
        match self {
            Chart::Latency(d) => latency::draw(area, d, style),
            Chart::Throughput(d) => throughput::draw(area, d, style),
            Chart::Queue(d) => queue::draw(area, d, style),
            Chart::Timeline(d) => timeline::draw(area, d, style),
            Chart::GoodputSlo(d) => goodput_slo::draw(area, d, style),
            Chart::Limits(d) => limits::draw(area, d, style),
            Chart::Tail(d) => tail::draw(area, d, style),
            Chart::Replica(d) => replica::draw(area, d, style),
        }
    }
}

/// Renders `chart` at `css` size (CSS px) and `style`, as an SVG string.
pub fn svg(chart: &Chart, css: (u32, u32), style: Style) -> String {
    let scale = style.scale;
    let size = ((f64::from(css.0) * scale).round() as u32, (f64::from(css.1) * scale).round() as u32);
    let mut out = String::new();
    {
        let area = SVGBackend::with_string(&mut out, size).into_drawing_area();
        chart.draw(&area, &style).unwrap_or_else(|e| panic!("{} failed: {e:?}", chart.name()));
        area.present().unwrap();
    }
    out
}

/// The text of every `<text>` element, in order.
pub fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let start = t.find('>')? + 1;
            let end = t.find("</text>")?;
            Some(t[start..end].trim().to_string())
        })
        .collect()
}

/// How many elements with this tag name the SVG holds.
pub fn count(svg: &str, tag: &str) -> usize {
    svg.matches(&format!("<{tag} ")).count() + svg.matches(&format!("<{tag}>")).count()
}

/// The loads of the lesson's sweep: 10 % to 120 % in steps of 5 %.
pub fn loads() -> Vec<f64> {
    (0..23).map(|i| 0.1 + 0.05 * f64::from(i)).collect()
}

/// Piecewise-linear in log space through anchors: latency curves look like this.
fn log_interp(anchors: &[(f64, f64)], x: f64) -> f64 {
    let w = anchors.windows(2).find(|w| x <= w[1].0 + 1e-12).unwrap_or(&anchors[anchors.len() - 2..]);
    let (a, b) = (w[0], w[1]);
    let t = (x - a.0) / (b.0 - a.0);
    libm::exp(libm::log(a.1) + t * (libm::log(b.1) - libm::log(a.1)))
}

pub fn latency_data() -> LatencyData {
    let loads = loads();
    let p50 = [(0.1, 0.25), (0.7, 0.45), (0.85, 0.9), (1.0, 3.0), (1.2, 40.0)];
    let p99 = [(0.1, 0.5), (0.7, 1.2), (0.85, 4.0), (1.0, 30.0), (1.2, 80.0)];
    LatencyData {
        metric_label: "TTFT".into(),
        p50_s: loads.iter().map(|&l| log_interp(&p50, l)).collect(),
        p99_s: loads.iter().map(|&l| log_interp(&p99, l)).collect(),
        loads,
        slo_s: Some(2.0),
        current_load: Some(0.9),
        current_p50_s: Some(1.3),
        current_p99_s: Some(7.5),
        knee_load: Some(0.85),
        ..Default::default()
    }
}

pub fn throughput_data() -> ThroughputData {
    let loads = loads();
    let goodput = |l: f64| {
        let served = l.min(1.0) * 4.5;
        if l <= 0.85 { served } else { log_interp(&[(0.85, served), (1.0, 2.0), (1.2, 0.5)], l) }
    };
    ThroughputData {
        throughput_rps: loads.iter().map(|&l| l.min(1.0) * 4.5).collect(),
        goodput_rps: loads.iter().map(|&l| goodput(l)).collect(),
        offered_rps: loads.iter().map(|&l| l * 4.5).collect(),
        loads,
        capacity_rps: Some(4.5),
        current_load: Some(0.9),
        current_throughput_rps: Some(4.05),
        current_goodput_rps: Some(goodput(0.9)),
        current_label: None,
        knee_load: Some(0.85),
        closed_loop: false,
    }
}

pub fn queue_data() -> QueueData {
    let t_s: Vec<f64> = (0..=240).map(|i| f64::from(i) * 0.5).collect();
    // Deterministic wiggle so the lines look like a simulation, not a formula.
    let wiggle = |t: f64| libm::sin(t * 1.7) * 1.5 + libm::cos(t * 0.37) * 2.0;
    QueueData {
        running: t_s.iter().map(|&t| (64.0 * (1.0 - libm::exp(-t / 4.0)) + wiggle(t)).clamp(0.0, 64.0)).collect(),
        waiting: t_s.iter().map(|&t| (0.45 * (t - 8.0) + 2.0 * wiggle(t * 1.3)).max(0.0)).collect(),
        t_s,
        max_num_seqs: Some(64.0),
    }
}

pub fn timeline_data() -> TimelineData {
    let arrivals = [0.0, 0.12, 0.3, 0.41, 0.55, 0.8];
    let waits = [0.0, 0.03, 0.09, 0.16, 0.2, 0.28];
    let prefills = [0.09, 0.14, 0.07, 0.12, 0.15, 0.1];
    let outputs = [24, 30, 18, 36, 22, 26];
    let requests = (0..arrivals.len())
        .map(|i| {
            let scheduled = arrivals[i] + waits[i];
            let first = scheduled + prefills[i];
            let tokens: Vec<f64> =
                (0..outputs[i]).map(|k| first + 0.025 * f64::from(k) + 0.004 * libm::sin(f64::from(k) * 0.9)).collect();
            RequestTrace {
                label: format!("req {}", i + 1),
                arrival_s: arrivals[i],
                scheduled_s: scheduled,
                first_token_s: first,
                finish_s: *tokens.last().unwrap(),
                token_times_s: tokens,
            }
        })
        .collect();
    TimelineData { requests, highlight: Some(2) }
}

pub fn goodput_slo_data() -> GoodputSloData {
    let slo_s: Vec<f64> = (0..=12).map(|i| 0.1 * libm::pow(10.0, f64::from(i) / 4.0)).collect();
    GoodputSloData {
        goodput_rps: slo_s.iter().map(|&s| 4.05 / (1.0 + (1.3 / s) * (1.3 / s))).collect(),
        throughput_rps: vec![4.05; slo_s.len()],
        slo_s,
        current_slo_s: Some(2.0),
    }
}

/// One realistic example of every chart.
pub fn limits_data() -> LimitsData {
    let bar = |label: &str, short: &str, rps| limits::Bar { label: label.into(), short_label: short.into(), rps };
    LimitsData {
        bars: vec![bar("sequence cap", "seq cap", 4.23), bar("KV cache", "KV", 7.98), bar("prefill", "prefill", 4.25)],
        binding: Some(2),
        measured_rps: Some(4.24),
    }
}

/// TTFT by percentile at 85% and 100%, and the slider's run at 90%.
pub fn tail_data() -> TailData {
    let grid = tail::percentile_grid();
    let curve = |label: &str, median: f64, tail: f64| TailCurve {
        label: label.into(),
        seconds: grid.iter().map(|p| median + tail * tail::nines(*p) * tail::nines(*p)).collect(),
        percentiles: grid.clone(),
    };
    TailData {
        metric_label: "TTFT".into(),
        references: vec![curve("85%", 0.6, 0.35), curve("100%", 15.0, 2.2)],
        current: Some(curve("now 90%", 1.0, 0.8)),
        slo_s: Some(2.0),
        y_max_s: Some(40.0),
    }
}

/// A RAG replica at 85%: 41 of 64 seats taken (one prefilling), three waiting.
pub fn replica_data() -> ReplicaData {
    let mut seats = vec![SeatKind::Decode; 40];
    seats.insert(7, SeatKind::Prefill);
    ReplicaData {
        max_num_seqs: 64,
        seats,
        waiting: 3,
        budget_tokens: 2048,
        decode_tokens: 40,
        prefill_tokens: 2008,
        kv_usage: 0.27,
        ..ReplicaData::default()
    }
}

pub fn all_charts() -> Vec<Chart> {
    vec![
        Chart::Latency(latency_data()),
        Chart::Throughput(throughput_data()),
        Chart::Queue(queue_data()),
        Chart::Timeline(timeline_data()),
        Chart::GoodputSlo(goodput_slo_data()),
        Chart::Limits(limits_data()),
        Chart::Tail(tail_data()),
        Chart::Replica(replica_data()),
    ]
}

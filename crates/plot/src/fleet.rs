//! A fleet over a day, one scrape per point: the replicas against the traffic, TTFT p99
//! against its SLO, and the waiting queue. The time axis spans the whole run from the first
//! point, so a run drawn as it plays fills the charts from left to right.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::axes::{Axis, Ticks};
use crate::format::{format_rate, format_seconds, format_tick};
use crate::frame::{self, DrawResult};
use crate::geom::{self, Run, Span};
use crate::layout;
use crate::legend::{Item, Swatch};
use crate::marks::Side;
use crate::style::Style;

/// What the fleet charts show; every series has one value per scrape.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetData {
    /// Scrape times in simulated seconds.
    pub t_s: Vec<f64>,
    /// The run's length: the time axis ends there (else at the last scrape).
    pub duration_s: Option<f64>,
    /// The traffic's rate at each scrape, in requests per second.
    pub offered_rps: Vec<f64>,
    /// Replicas serving.
    pub ready: Vec<f64>,
    /// Replicas in their cold start.
    pub starting: Vec<f64>,
    /// One replica's capacity: ready replicas x this is the fleet's capacity, and the traffic
    /// is drawn in replicas' worth of it.
    pub replica_capacity_rps: Option<f64>,
    /// TTFT p99 of the requests finished since the previous scrape (NaN: none).
    pub ttft_p99_s: Vec<f64>,
    /// The TTFT SLO: a dashed labelled line.
    pub slo_ttft_s: Option<f64>,
    /// `num_requests_waiting` summed over the fleet.
    pub waiting: Vec<f64>,
}

impl FleetData {
    fn minutes(&self) -> Vec<f64> {
        self.t_s.iter().map(|t| t / 60.0).collect()
    }

    fn time_axis(&self) -> Axis<'static> {
        let last = Span::default().values(&self.t_s).maybe(self.duration_s).0.map_or(60.0, |(_, hi)| hi);
        Axis {
            lo: 0.0,
            hi: (last / 60.0).max(1.0),
            ticks: Ticks::Nice,
            format: &format_tick,
            title: "simulated time (min)".into(),
            grid: true,
        }
    }
}

/// One of the three fleet charts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FleetChart {
    /// Ready and starting replicas against the traffic.
    Replicas,
    /// TTFT p99 against its SLO.
    Ttft,
    /// The fleet's waiting queue.
    Waiting,
}

/// Draws `chart` on `area`.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &FleetData,
    chart: FleetChart,
    style: &Style,
) -> DrawResult<DB> {
    match chart {
        FleetChart::Replicas => draw_replicas(area, data, style),
        FleetChart::Ttft => draw_ttft(area, data, style),
        FleetChart::Waiting => draw_waiting(area, data, style),
    }
}

/// A series held from one scrape to the next (a count changes at a scrape, not between).
fn steps(runs: Vec<Run>) -> Vec<Run> {
    runs.into_iter()
        .map(|run| {
            let mut out = Vec::with_capacity(run.len() * 2);
            for (i, &(x, y)) in run.iter().enumerate() {
                if i > 0 {
                    out.push((x, run[i - 1].1));
                }
                out.push((x, y));
            }
            out
        })
        .collect()
}

/// Ready replicas (the fleet's capacity, a filled step), ready plus starting (dashed), and the
/// offered traffic in replicas' worth of one replica's capacity (solid).
fn draw_replicas<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &FleetData, style: &Style) -> DrawResult<DB> {
    let minutes = data.minutes();
    let cap = data.replica_capacity_rps.filter(|c| c.is_finite() && *c > 0.0);
    let total: Vec<f64> = data.ready.iter().zip(&data.starting).map(|(r, s)| r + s).collect();
    let need: Vec<f64> = cap.map_or_else(Vec::new, |c| data.offered_rps.iter().map(|r| r / c).collect());
    let ready = steps(geom::runs(&minutes, &data.ready, geom::linear));
    let total = steps(geom::runs(&minutes, &total, geom::linear));
    let need = geom::runs(&minutes, &need, geom::linear);
    let has_data = !(ready.is_empty() && need.is_empty());
    let hi = Span::default().ys(&ready).ys(&total).ys(&need).0.map_or(1.0, |(_, hi)| hi);
    let narrow = frame::Frame::new(area, style).narrow;
    let title = match (cap, narrow) {
        (Some(c), false) => format!("replicas (1 = {})", format_rate(c)),
        _ => "replicas".into(),
    };
    let y = Axis { lo: 0.0, hi: (hi * 1.12).max(1.0), ticks: Ticks::Whole, format: &format_tick, title, grid: true };
    let t = style.theme();
    let legend = [
        Item { label: "ready: capacity".into(), swatch: Swatch::Area(t.series.blue) },
        Item { label: "ready + starting".into(), swatch: Swatch::Line { color: t.series.blue, dashed: true } },
        Item {
            label: if narrow { "traffic" } else { "traffic ÷ one replica" }.into(),
            swatch: Swatch::Line { color: t.series.vermillion, dashed: false },
        },
    ];
    let Some(plot) = layout::build_for(area, style, data.time_axis(), y, &legend, has_data)? else {
        return Ok(());
    };
    plot.area(&ready, t.series.blue)?;
    plot.line(&ready, t.series.blue, 1.5, false)?;
    plot.line(&total, t.series.blue, 2.0, true)?;
    plot.line(&need, t.series.vermillion, 2.0, false)?;
    Ok(())
}

/// TTFT p99 per scrape on a log axis, against the SLO.
fn draw_ttft<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &FleetData, style: &Style) -> DrawResult<DB> {
    let minutes = data.minutes();
    let p99 = geom::runs(&minutes, &data.ttft_p99_s, geom::log10);
    let slo = data.slo_ttft_s.and_then(|s| Some((s, geom::log10(s)?)));
    let ys = Span::default().ys(&p99).maybe(slo.map(|s| s.1));
    let (lo, hi) = ys.0.map_or((-2.0, 1.0), |(lo, hi)| ((lo + 1e-9).floor(), (hi - 1e-9).ceil()));
    let fmt = |v: f64, _step: f64| format_seconds(libm::pow(10.0, v));
    let y =
        Axis { lo, hi: hi.max(lo + 1.0), ticks: Ticks::Log, format: &fmt, title: "TTFT p99 (log)".into(), grid: true };
    let t = style.theme();
    let legend =
        [Item { label: "TTFT p99".into(), swatch: Swatch::Line { color: t.series.vermillion, dashed: false } }];
    let Some(plot) = layout::build_for(area, style, data.time_axis(), y, &legend, !p99.is_empty())? else {
        return Ok(());
    };
    if let Some((_, y)) = slo {
        plot.hline(y, t.reference)?;
    }
    plot.line(&p99, t.series.vermillion, 2.0, false)?;
    if let Some((s, y)) = slo {
        plot.hline_label(y, &format!("SLO {}", format_seconds(s)), Side::Right)?;
    }
    Ok(())
}

/// `num_requests_waiting` summed over the fleet, per scrape.
fn draw_waiting<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &FleetData, style: &Style) -> DrawResult<DB> {
    let minutes = data.minutes();
    let waiting = geom::runs(&minutes, &data.waiting, geom::linear);
    let hi = Span::default().ys(&waiting).0.map_or(1.0, |(_, hi)| hi);
    let y = Axis {
        lo: 0.0,
        hi: (hi * 1.12).max(1.0),
        ticks: Ticks::Whole,
        format: &format_tick,
        title: "requests".into(),
        grid: true,
    };
    let t = style.theme();
    let narrow = frame::Frame::new(area, style).narrow;
    let label = if narrow { "waiting (fleet)" } else { "num_requests_waiting (fleet)" };
    let legend = [Item { label: label.into(), swatch: Swatch::Area(t.series.orange) }];
    let Some(plot) = layout::build_for(area, style, data.time_axis(), y, &legend, !waiting.is_empty())? else {
        return Ok(());
    };
    plot.area(&waiting, t.series.orange)?;
    plot.line(&waiting, t.series.orange, 2.0, false)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters_svg::SVGBackend;

    use FleetChart::{Replicas, Ttft, Waiting};

    fn svg(chart: FleetChart, data: &FleetData, w: u32, dark: bool) -> String {
        let mut out = String::new();
        {
            let area = SVGBackend::with_string(&mut out, (w, 240)).into_drawing_area();
            let style = if dark { Style::dark(1.0) } else { Style::light(1.0) };
            draw(&area, data, chart, &style.for_svg()).unwrap();
            area.present().unwrap();
        }
        out
    }

    fn day() -> FleetData {
        let t_s: Vec<f64> = (1..=360).map(|i| f64::from(i) * 10.0).collect();
        let spike = |t: f64| (1500.0..2100.0).contains(&t);
        FleetData {
            offered_rps: t_s.iter().map(|&t| if spike(t) { 45.0 } else { 20.0 }).collect(),
            ready: t_s.iter().map(|&t| if t > 1620.0 && t < 2400.0 { 5.0 } else { 2.0 }).collect(),
            starting: t_s.iter().map(|&t| if (1530.0..=1620.0).contains(&t) { 3.0 } else { 0.0 }).collect(),
            ttft_p99_s: t_s.iter().map(|&t| if spike(t) && t < 1650.0 { 30.0 } else { 0.12 }).collect(),
            waiting: t_s.iter().map(|&t| if spike(t) && t < 1650.0 { 800.0 } else { 0.0 }).collect(),
            t_s,
            duration_s: Some(3600.0),
            replica_capacity_rps: Some(13.7),
            slo_ttft_s: Some(0.5),
        }
    }

    #[test]
    fn each_chart_names_its_series_at_phone_and_desktop_widths_in_both_schemes() {
        for w in [360, 900] {
            for dark in [false, true] {
                let replicas = svg(Replicas, &day(), w, dark);
                assert!(replicas.contains("ready: capacity") && replicas.contains("ready + starting"), "{w}");
                assert!(replicas.contains("traffic"));
                assert_eq!(replicas.contains("1 = 13.7 req/s"), w == 900, "{w}");
                // The starting replicas are dashed: colour is not the only difference.
                let dashed = FleetData { starting: vec![], ..day() };
                let without = svg(Replicas, &dashed, w, dark).matches("<polyline").count();
                assert!(replicas.matches("<polyline").count() > without + 3, "{w}: dashes");
                let ttft = svg(Ttft, &day(), w, dark);
                assert!(ttft.contains("SLO 500 ms") && ttft.contains("TTFT p99"), "{w}");
                let waiting = svg(Waiting, &day(), w, dark);
                assert!(waiting.contains("waiting (fleet)"), "{w}");
                assert!(waiting.contains("simulated time (min)"));
            }
        }
    }

    #[test]
    fn a_run_in_progress_keeps_the_whole_day_on_the_axis_and_nothing_draws_as_no_data() {
        let mut part = day();
        for v in [&mut part.t_s, &mut part.offered_rps, &mut part.ready, &mut part.starting] {
            v.truncate(30);
        }
        let drawn = svg(Replicas, &part, 900, false);
        assert!(drawn.contains("\n60"), "the axis runs to the hour: {drawn}");
        let empty = FleetData::default();
        for chart in [Replicas, Ttft, Waiting] {
            assert!(svg(chart, &empty, 360, false).contains("no data"));
        }
        // NaN (a scrape with nothing finished) breaks the line rather than drawing it.
        let gaps = FleetData { ttft_p99_s: vec![f64::NAN; 360], ..day() };
        assert!(svg(Ttft, &gaps, 360, false).contains("no data"));
    }
}

//! Latency against offered load: p50 and p99 curves, the SLO, the knee and the slider's load.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axes::{Axis, Ticks};
use crate::format::{format_percent, format_seconds};
use crate::frame::{self, DrawResult};
use crate::geom::{self, Span};
use crate::layout;
use crate::legend::{Item, Swatch};
use crate::marks::Side;
use crate::style::Style;

/// How the latency axis is scaled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum YScale {
    /// Logarithmic (the default): latency explodes past capacity from ~0.1 s to ~100 s, and
    /// only a log axis shows both ends.
    #[default]
    Log,
    /// Linear from 0, clipped at [`LatencyData::y_max_s`] or a sensible default.
    Linear,
}

/// What the latency chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyData {
    /// The metric's name for the axis title: "TTFT", "TPOT", "E2E" (empty reads "latency").
    pub metric_label: String,
    /// Offered load of each point as a fraction of capacity (1.0 = 100 %).
    pub loads: Vec<f64>,
    /// A closed loop's x is the users' demand, not an offered rate: titles the axis so.
    pub closed_loop: bool,
    /// Median latency at each load, in seconds.
    pub p50_s: Vec<f64>,
    /// 99th-percentile latency at each load, in seconds.
    pub p99_s: Vec<f64>,
    /// Mean latency at each load, in seconds: a dashed line, so "the average still looks
    /// fine" can be seen beside the tail. Empty to leave it out.
    pub mean_s: Vec<f64>,
    /// Loads from here up have no steady state (past capacity the queue grows for as long as a
    /// run lasts): shaded and labelled. `None` for no shading.
    pub unsteady_from: Option<f64>,
    /// The latency SLO, drawn as a dashed horizontal line labelled "SLO".
    pub slo_s: Option<f64>,
    /// The slider's load (fraction of capacity): a vertical marker with a dot on each curve.
    pub current_load: Option<f64>,
    /// Live p50 at the current load; without it the dot sits on the curve, interpolated.
    pub current_p50_s: Option<f64>,
    /// Live p99 at the current load; without it the dot sits on the curve, interpolated.
    pub current_p99_s: Option<f64>,
    /// The knee (fraction of capacity), drawn as a labelled vertical line.
    pub knee_load: Option<f64>,
    /// Log (default) or linear latency axis.
    pub y_scale: YScale,
    /// Top of a linear axis in seconds; `None` picks 5 x SLO, or the p99 seen up to capacity.
    pub y_max_s: Option<f64>,
    /// Loads of a second p99 curve to compare against (e.g. the open loop while the chart shows
    /// a closed one), drawn thin and dashed; empty to leave it out.
    pub compare_loads: Vec<f64>,
    /// That curve's p99 latencies, in seconds.
    pub compare_p99_s: Vec<f64>,
    /// Its legend label, e.g. "p99 open loop".
    pub compare_label: String,
}

/// Draws the latency chart on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &LatencyData, style: &Style) -> DrawResult<DB> {
    let log = data.y_scale == YScale::Log;
    let to_y: fn(f64) -> Option<f64> = if log { geom::log10 } else { geom::linear };
    let p50 = geom::runs(&data.loads, &data.p50_s, to_y);
    let p99 = geom::runs(&data.loads, &data.p99_s, to_y);
    let mean = geom::runs(&data.loads, &data.mean_s, to_y);
    let compare = geom::runs(&data.compare_loads, &data.compare_p99_s, to_y);
    let has_data = !(p50.is_empty() && p99.is_empty());

    let (x_lo, x_hi) = load_range(&data.loads, [data.current_load, data.knee_load]);
    let (y_lo, y_hi) = if log { log_range(data, &p50, &p99, &compare) } else { (0.0, linear_max(data)) };
    let metric = if data.metric_label.is_empty() { "latency" } else { data.metric_label.as_str() };
    let narrow = frame::Frame::new(area, style).narrow;
    let y_title = match (log, narrow) {
        (true, false) => format!("{metric} (log scale)"),
        (true, true) => format!("{metric} (log)"),
        (false, _) => metric.to_string(),
    };
    let fmt_y = |v: f64, _step: f64| format_seconds(if log { libm::pow(10.0, v) } else { v });
    let fmt_x = |v: f64, _step: f64| format_percent(v);
    let x = load_axis(x_lo, x_hi, &fmt_x, data.closed_loop);
    let y = Axis {
        lo: y_lo,
        hi: y_hi,
        ticks: if log { Ticks::Log } else { Ticks::Nice },
        format: &fmt_y,
        title: y_title,
        grid: true,
    };
    let t = style.theme();
    let mut legend = vec![
        Item { label: "p50".into(), swatch: Swatch::Line { color: t.series.blue, dashed: false } },
        Item { label: "p99".into(), swatch: Swatch::Line { color: t.series.vermillion, dashed: false } },
    ];
    if !mean.is_empty() {
        legend.push(Item { label: "mean".into(), swatch: Swatch::Line { color: t.series.bluish_green, dashed: true } });
    }
    if !compare.is_empty() {
        let label = if data.compare_label.is_empty() { "p99 (compare)" } else { data.compare_label.as_str() };
        legend.push(Item { label: label.into(), swatch: Swatch::Line { color: t.muted, dashed: true } });
    }
    let Some(plot) = layout::build_for(area, style, x, y, &legend, has_data)? else {
        return Ok(());
    };

    // The region without a steady state goes under everything.
    let unsteady = data.unsteady_from.filter(|u| u.is_finite() && *u < plot.map.range.x1);
    if let Some(from) = unsteady {
        let (x0, y0, x1, y1) = (from.max(plot.map.range.x0), plot.map.range.y0, plot.map.range.x1, plot.map.range.y1);
        plot.bar((x0, y0), (x1, y1), t.grid.mix(0.55).filled())?;
    }
    // Lines first, labels last, so labels can find a spot clear of every line.
    let knee = data.knee_load.filter(|k| k.is_finite());
    let slo = data.slo_s.and_then(|s| Some((s, to_y(s)?)));
    if let Some(knee) = knee {
        plot.vline(knee, t.series.reddish_purple, 1.5, true)?;
    }
    if let Some((_, y)) = slo {
        plot.hline(y, t.reference)?;
    }
    plot.line(&compare, t.muted, 1.25, true)?;
    plot.line(&mean, t.series.bluish_green, 1.5, true)?;
    plot.line(&p50, t.series.blue, 2.0, false)?;
    plot.line(&p99, t.series.vermillion, 2.0, false)?;
    if let Some(load) = data.current_load.filter(|c| c.is_finite()) {
        plot.vline(load, t.marker, 1.5, false)?;
        for (name, runs, live, color) in
            [("p50", &p50, data.current_p50_s, t.series.blue), ("p99", &p99, data.current_p99_s, t.series.vermillion)]
        {
            let y = live.and_then(to_y).or_else(|| geom::interpolate(runs, load));
            match y {
                // Past the top (the linear axis stops at a few times the SLO): marked at the edge,
                // the p99 with its value (a p50 up there has its p99 above it too).
                Some(y) if y > plot.map.range.y1 => {
                    let seconds = if log { libm::pow(10.0, y) } else { y };
                    let text = (name == "p99").then(|| format!("p99 {}", format_seconds(seconds)));
                    plot.dot_above(load, color, text.as_deref())?;
                }
                Some(y) => plot.dot((load, y), color)?,
                None => {}
            }
        }
    }
    if let Some(knee) = knee {
        plot.vline_label(knee, &format!("knee {}", format_percent(knee)))?;
    }
    if let Some(from) = unsteady {
        let (_, top, right, _) = plot.bounds();
        let (left, _) = plot.pixel((from.max(plot.map.range.x0), plot.map.range.y1));
        let pad = plot.frame.px(4.0);
        // The caption says why; the chart names the region, shorter when it is narrow.
        let fits = |text: &str| plot.label_width(text) + 2 * pad <= right - left;
        let text = if fits("no steady state") { "no steady state" } else { "unsteady" };
        plot.text_at(text, (right - pad, top + pad), Pos::new(HPos::Right, VPos::Top))?;
    }
    if let Some((slo_s, y)) = slo {
        plot.hline_label(y, &format!("SLO {}", format_seconds(slo_s)), Side::Right)?;
    }
    Ok(())
}

/// The offered-load axis shared by the latency and throughput charts: from 0 to the largest
/// load shown, rounded up to a multiple of 10 %.
pub(crate) fn load_range(loads: &[f64], extra: [Option<f64>; 2]) -> (f64, f64) {
    let hi = Span::default().values(loads).maybe(extra[0]).maybe(extra[1]).0.map_or(1.2, |(_, hi)| hi);
    let hi = ((hi * 10.0 - 1e-9).ceil() / 10.0).clamp(0.1, 100.0);
    (0.0, hi)
}

/// The x axis of a chart against offered load, or against a closed loop's demand (the users,
/// as the share of capacity they would offer if every answer took the unloaded latency).
pub(crate) fn load_axis<'f>(lo: f64, hi: f64, format: &'f dyn Fn(f64, f64) -> String, closed: bool) -> Axis<'f> {
    let title = if closed { "users' demand (% of capacity)" } else { "offered load (% of capacity)" };
    Axis { lo, hi, ticks: Ticks::Nice, format, title: title.into(), grid: true }
}

/// Whole decades (in log10) around every value drawn, so ticks land on "100 ms", "1 s", ...
fn log_range(data: &LatencyData, p50: &[geom::Run], p99: &[geom::Run], compare: &[geom::Run]) -> (f64, f64) {
    let log = |v: Option<f64>| v.and_then(geom::log10);
    let ys = Span::default().ys(p50).ys(p99).ys(compare);
    let ys = ys.maybe(log(data.slo_s)).maybe(log(data.current_p50_s)).maybe(log(data.current_p99_s));
    let Some((lo, hi)) = ys.0 else {
        return (-1.0, 2.0);
    };
    // Whole decades; a value at exactly 10^k may sit on the frame rather than waste a decade.
    let (lo, hi) = ((lo + 1e-9).floor(), (hi - 1e-9).ceil());
    (lo, hi.max(lo + 1.0))
}

/// Top of a linear latency axis: explicit, else 5 x SLO (the curves leave through the top
/// past the knee, which is the point), else the largest latency up to capacity.
fn linear_max(data: &LatencyData) -> f64 {
    let positive = |v: &f64| v.is_finite() && *v > 0.0;
    if let Some(m) = data.y_max_s.filter(positive) {
        return m;
    }
    if let Some(slo) = data.slo_s.filter(positive) {
        return slo * 5.0;
    }
    let stable = |ys: &[f64]| {
        let within = data.loads.iter().zip(ys).filter(|(l, _)| **l <= 1.0);
        within.fold(Span::default(), |s, (_, &y)| s.value(y)).0.map(|s| s.1)
    };
    let hi = stable(&data.p99_s)
        .or_else(|| stable(&data.p50_s))
        .or_else(|| Span::default().values(&data.p99_s).values(&data.p50_s).0.map(|s| s.1));
    hi.filter(positive).map_or(1.0, |h| h * 1.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters_svg::SVGBackend;

    fn svg(data: &LatencyData, w: u32) -> String {
        let mut out = String::new();
        {
            let area = SVGBackend::with_string(&mut out, (w, 260)).into_drawing_area();
            draw(&area, data, &Style::light(1.0).for_svg()).unwrap();
            area.present().unwrap();
        }
        out
    }

    fn data() -> LatencyData {
        let loads = vec![0.5, 0.8, 0.9, 1.0, 1.1, 1.2];
        LatencyData {
            metric_label: "TTFT".into(),
            p50_s: vec![0.4, 0.6, 0.9, 2.0, 8.0, 20.0],
            p99_s: vec![0.8, 1.6, 3.0, 9.0, 30.0, 60.0],
            mean_s: vec![0.45, 0.7, 1.1, 2.6, 10.0, 24.0],
            loads,
            slo_s: Some(2.0),
            y_scale: YScale::Linear,
            ..Default::default()
        }
    }

    #[test]
    fn the_mean_line_and_the_unsteady_region_are_drawn_and_named() {
        let without = svg(&data(), 640);
        assert!(without.contains("mean") && !without.contains("no steady state"));
        let with = svg(&LatencyData { unsteady_from: Some(1.0), ..data() }, 640);
        assert!(with.contains("no steady state") || with.contains("unsteady"), "{with}");
        // The shade is one more rectangle than without it.
        assert_eq!(with.matches("<rect").count(), without.matches("<rect").count() + 1);
        // A wider region has room for the long name; no mean, no legend entry.
        assert!(svg(&LatencyData { unsteady_from: Some(0.8), ..data() }, 640).contains("no steady state"));
        assert!(!svg(&LatencyData { mean_s: vec![], ..data() }, 640).contains("mean"));
    }

    #[test]
    fn a_closed_loop_is_plotted_against_its_users_demand() {
        assert!(svg(&data(), 640).contains("offered load (% of capacity)"));
        let closed = svg(&LatencyData { closed_loop: true, ..data() }, 640);
        assert!(
            closed.contains("users&apos; demand (% of capacity)") || closed.contains("users' demand (% of capacity)"),
            "{closed}"
        );
        assert!(!closed.contains("offered load"));
    }
}

//! Throughput and goodput against offered load: throughput follows the offered rate and then
//! flattens at capacity, while goodput (requests that met the SLO) falls away past the knee.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::axes::{Axis, Ticks};
use crate::format::{format_percent, format_tick};
use crate::frame::{self, DrawResult};
use crate::geom::{self, Span};
use crate::latency::{load_axis, load_range};
use crate::layout;
use crate::legend::{Item, Swatch};
use crate::marks::Side;
use crate::style::Style;

/// What the throughput chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThroughputData {
    /// Offered load of each point as a fraction of capacity (1.0 = 100 %).
    pub loads: Vec<f64>,
    /// A closed loop's x is the users' demand, not an offered rate: titles the axis so.
    pub closed_loop: bool,
    /// Completed requests per second at each load (dashed line).
    pub throughput_rps: Vec<f64>,
    /// Requests per second that met the SLO at each load (solid line).
    pub goodput_rps: Vec<f64>,
    /// What each load asks for, in requests per second (a faint line); empty to leave it out.
    pub offered_rps: Vec<f64>,
    /// The replica's saturation throughput: a thin labelled horizontal line.
    pub capacity_rps: Option<f64>,
    /// The slider's load (fraction of capacity): a vertical marker with a dot on each curve.
    pub current_load: Option<f64>,
    /// Live throughput at the current load; without it the dot is interpolated.
    pub current_throughput_rps: Option<f64>,
    /// Live goodput at the current load; without it the dot is interpolated.
    pub current_goodput_rps: Option<f64>,
    /// A measured replica rather than the slider: only its throughput is known, so the marker
    /// gets this label and a dot on the throughput curve alone.
    pub current_label: Option<String>,
    /// The knee (fraction of capacity), drawn as a labelled vertical line.
    pub knee_load: Option<f64>,
}

/// Draws the throughput chart on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &ThroughputData, style: &Style) -> DrawResult<DB> {
    let throughput = geom::runs(&data.loads, &data.throughput_rps, geom::linear);
    let goodput = geom::runs(&data.loads, &data.goodput_rps, geom::linear);
    let offered = geom::runs(&data.loads, &data.offered_rps, geom::linear);
    let has_data = !(throughput.is_empty() && goodput.is_empty());

    let (x_lo, x_hi) = load_range(&data.loads, [data.current_load, data.knee_load]);
    let ys = Span::default().ys(&throughput).ys(&goodput).ys(&offered);
    let ys = ys.maybe(data.capacity_rps).maybe(data.current_throughput_rps).maybe(data.current_goodput_rps);
    let (y_lo, y_hi) = match ys.0 {
        Some((lo, hi)) if hi > 0.0 => (lo.min(0.0), hi * 1.08),
        Some((lo, _)) if lo < 0.0 => (lo * 1.08, 0.0),
        _ => (0.0, 1.0),
    };
    let fmt_x = |v: f64, _step: f64| format_percent(v);
    let fmt_y = format_tick;
    let narrow = frame::Frame::new(area, style).narrow;
    let x = load_axis(x_lo, x_hi, &fmt_x, data.closed_loop);
    let y = Axis {
        lo: y_lo,
        hi: y_hi,
        ticks: Ticks::Nice,
        format: &fmt_y,
        title: if narrow { "req/s" } else { "requests/s" }.into(),
        grid: true,
    };
    let t = style.theme();
    let mut legend = vec![
        Item { label: "throughput".into(), swatch: Swatch::Line { color: t.series.blue, dashed: true } },
        Item { label: "goodput".into(), swatch: Swatch::Line { color: t.series.vermillion, dashed: false } },
    ];
    if !offered.is_empty() {
        legend.push(Item { label: "offered".into(), swatch: Swatch::Line { color: t.reference, dashed: false } });
    }
    let Some(plot) = layout::build_for(area, style, x, y, &legend, has_data)? else {
        return Ok(());
    };

    // Lines first, labels last, so labels can find a spot clear of every line.
    let knee = data.knee_load.filter(|k| k.is_finite());
    let cap = data.capacity_rps.filter(|c| c.is_finite());
    if let Some(knee) = knee {
        plot.vline(knee, t.series.reddish_purple, 1.5, true)?;
    }
    if let Some(cap) = cap {
        plot.hline(cap, t.reference)?;
    }
    // Faint: it is the question (what the load asks for), not an answer.
    plot.line(&offered, t.reference, 1.0, false)?;
    plot.line(&goodput, t.series.vermillion, 2.0, false)?;
    // Dashed and on top: where goodput equals throughput both stay visible.
    plot.line(&throughput, t.series.blue, 2.0, true)?;
    if let Some(load) = data.current_load.filter(|c| c.is_finite()) {
        plot.vline(load, t.marker, 1.5, false)?;
        let measured = data.current_label.is_some();
        for (runs, live, color) in [
            (&goodput, data.current_goodput_rps, t.series.vermillion),
            (&throughput, data.current_throughput_rps, t.series.blue),
        ] {
            if measured && std::ptr::eq(runs, &goodput) {
                continue;
            }
            let y = live.filter(|v| v.is_finite()).or_else(|| geom::interpolate(runs, load));
            if let Some(y) = y {
                plot.dot((load, y), color)?;
            }
        }
    }
    if let Some(knee) = knee {
        plot.vline_label(knee, &format!("knee {}", format_percent(knee)))?;
    }
    if let (Some(label), Some(load)) = (&data.current_label, data.current_load.filter(|c| c.is_finite())) {
        plot.vline_label(load, label)?;
    }
    if let Some(cap) = cap {
        let label = if narrow { "capacity".to_string() } else { format!("capacity {} req/s", format_tick(cap, 0.1)) };
        plot.hline_label(cap, &label, Side::Left)?;
    }
    Ok(())
}

//! The engine's gauges over simulated time at the current load: running requests fill up to
//! `max_num_seqs`, and past capacity the waiting queue grows without bound.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::axes::{Axis, Ticks};
use crate::format::format_tick;
use crate::frame::DrawResult;
use crate::geom::{self, Span};
use crate::layout;
use crate::legend::{Item, Swatch};
use crate::marks::Side;
use crate::style::Style;

/// What the queue chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueData {
    /// Sample times in simulated seconds.
    pub t_s: Vec<f64>,
    /// `num_requests_running` at each sample (a filled area).
    pub running: Vec<f64>,
    /// `num_requests_waiting` at each sample (a line).
    pub waiting: Vec<f64>,
    /// The engine's `max_num_seqs`: a dashed cap line labelled "max-num-seqs".
    pub max_num_seqs: Option<f64>,
}

/// Draws the queue chart on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &QueueData, style: &Style) -> DrawResult<DB> {
    let running = geom::runs(&data.t_s, &data.running, geom::linear);
    let waiting = geom::runs(&data.t_s, &data.waiting, geom::linear);
    let has_data = !(running.is_empty() && waiting.is_empty());

    let (x_lo, x_hi) = match Span::default().xs(&running).xs(&waiting).0 {
        Some((lo, hi)) if hi > lo => (lo, hi),
        Some((lo, _)) => (lo, lo + 1.0),
        None => (0.0, 10.0),
    };
    let (y_lo, y_hi) = match Span::default().ys(&running).ys(&waiting).maybe(data.max_num_seqs).0 {
        Some((lo, hi)) if hi > 0.0 => (lo.min(0.0), hi * 1.12),
        Some((lo, _)) if lo < 0.0 => (lo * 1.1, 0.0),
        _ => (0.0, 1.0),
    };
    let x = Axis {
        lo: x_lo,
        hi: x_hi,
        ticks: Ticks::Nice,
        format: &format_tick,
        title: "simulated time (s)".into(),
        grid: true,
    };
    let y = Axis { lo: y_lo, hi: y_hi, ticks: Ticks::Nice, format: &format_tick, title: "requests".into(), grid: true };
    let t = style.theme();
    let legend = [
        Item { label: "running".into(), swatch: Swatch::Area(t.series.blue) },
        Item { label: "waiting".into(), swatch: Swatch::Line { color: t.series.orange, dashed: false } },
    ];
    let Some(plot) = layout::build_for(area, style, x, y, &legend, has_data)? else {
        return Ok(());
    };

    // The cap goes under the data: where running sits at the cap, running is what matters.
    let cap = data.max_num_seqs.filter(|c| c.is_finite());
    if let Some(cap) = cap {
        plot.hline(cap, t.reference)?;
    }
    plot.area(&running, t.series.blue)?;
    plot.line(&running, t.series.blue, 1.5, false)?;
    plot.line(&waiting, t.series.orange, 2.0, false)?;
    if let Some(cap) = cap {
        let label = format!("max-num-seqs {}", format_tick(cap, 1.0));
        plot.hline_label(cap, &label, Side::Left)?;
    }
    Ok(())
}

//! Goodput against the TTFT SLO at one load: throughput does not care what the SLO is, goodput
//! does, and the gap between the two lines is the traffic served too late to count.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::axes::{Axis, Ticks};
use crate::format::format_seconds;
use crate::frame::{self, DrawResult};
use crate::geom::{self, Span};
use crate::layout;
use crate::legend::{Item, Swatch};
use crate::style::Style;

/// What the goodput-versus-SLO chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GoodputSloData {
    /// TTFT SLO of each point, in seconds (log axis).
    pub slo_s: Vec<f64>,
    /// Requests per second meeting that SLO (solid line).
    pub goodput_rps: Vec<f64>,
    /// Completed requests per second at each point (dashed line; flat at one load).
    pub throughput_rps: Vec<f64>,
    /// The SLO in force: a vertical marker with a dot on the goodput line.
    pub current_slo_s: Option<f64>,
}

/// Draws the goodput-versus-SLO chart on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &GoodputSloData, style: &Style) -> DrawResult<DB> {
    // The x axis is log10(SLO): runs pair it with the rates, so map x first.
    let xs: Vec<f64> = data.slo_s.iter().map(|&s| geom::log10(s).unwrap_or(f64::NAN)).collect();
    let goodput = geom::runs(&xs, &data.goodput_rps, geom::linear);
    let throughput = geom::runs(&xs, &data.throughput_rps, geom::linear);
    let has_data = !(goodput.is_empty() && throughput.is_empty());
    let current = data.current_slo_s.and_then(geom::log10);

    let (x_lo, x_hi) = match Span::default().xs(&goodput).xs(&throughput).maybe(current).0 {
        Some((lo, hi)) => {
            let lo = (lo + 1e-9).floor();
            (lo, (hi - 1e-9).ceil().max(lo + 1.0))
        }
        None => (-1.0, 2.0),
    };
    let ys = Span::default().ys(&goodput).ys(&throughput).0;
    let y_hi = ys.map_or(1.0, |(_, hi)| if hi > 0.0 { hi * 1.1 } else { 1.0 });
    let fmt_x = |v: f64, _step: f64| format_seconds(libm::pow(10.0, v));
    let narrow = frame::Frame::new(area, style).narrow;
    let x = Axis {
        lo: x_lo,
        hi: x_hi,
        ticks: Ticks::Log,
        format: &fmt_x,
        title: if narrow { "TTFT SLO (log)" } else { "TTFT SLO (log scale)" }.into(),
        grid: true,
    };
    let y = Axis::rate(y_hi, narrow);
    let t = style.theme();
    let legend = [
        Item { label: "throughput".into(), swatch: Swatch::Line { color: t.series.blue, dashed: true } },
        Item { label: "goodput".into(), swatch: Swatch::Line { color: t.series.vermillion, dashed: false } },
    ];
    let Some(plot) = layout::build_for(area, style, x, y, &legend, has_data)? else {
        return Ok(());
    };
    plot.line(&goodput, t.series.vermillion, 2.0, false)?;
    plot.line(&throughput, t.series.blue, 2.0, true)?;
    if let Some(x) = current {
        plot.vline(x, t.marker, 1.5, false)?;
        if let Some(y) = geom::interpolate(&goodput, x) {
            plot.dot((x, y), t.series.vermillion)?;
        }
        let label = format!("SLO {}", format_seconds(libm::pow(10.0, x)));
        plot.vline_label(x, &label)?;
    }
    Ok(())
}

//! A latency by percentile, from the median to p99.9, at two reference loads and at the slider's:
//! how far the tail reaches, on axes that stay put while the slider moves, so 85% and 100% can
//! be compared by eye.
//!
//! The x axis is spaced by "nines" (`-log10(1 - p)`), so p50, p90, p99 and p99.9 sit at even
//! steps and the tail, where the loads differ, gets most of the width.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axes::{Axis, Ticks};
use crate::format::format_seconds;
use crate::frame::DrawResult;
use crate::geom;
use crate::layout;
use crate::legend::{Item, Swatch};
use crate::marks::Side;
use crate::style::Style;

/// The percentiles a curve is drawn through: p50 to p99.9, evenly spaced in nines.
pub fn percentile_grid() -> Vec<f64> {
    const POINTS: u32 = 48;
    let (lo, hi) = (nines(0.5), nines(0.999));
    (0..=POINTS).map(|i| 1.0 - libm::pow(10.0, -(lo + (hi - lo) * f64::from(i) / f64::from(POINTS)))).collect()
}

/// Where percentile `p` (0-1) sits on the axis: `-log10(1 - p)` (p50 at 0.30, p99 at 2).
pub fn nines(p: f64) -> f64 {
    -libm::log10(1.0 - p)
}

/// One curve: a latency at each percentile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TailCurve {
    /// The legend's name for it ("85%", "100%", "now 93%").
    pub label: String,
    /// Percentiles, as fractions (0.5 to 0.999).
    pub percentiles: Vec<f64>,
    /// The latency at each, in seconds.
    pub seconds: Vec<f64>,
}

/// What the tail chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TailData {
    /// The metric's name for the axis title ("TTFT").
    pub metric_label: String,
    /// Reference curves (at most two: thin, in two shades), drawn under the current one.
    pub references: Vec<TailCurve>,
    /// The run at the slider's load (bold), if there is one.
    pub current: Option<TailCurve>,
    /// The SLO: a labelled horizontal line.
    pub slo_s: Option<f64>,
    /// The top of the y axis, held fixed while the slider moves (a curve above it leaves
    /// through the top). Without it, the highest value drawn sets it.
    pub y_max_s: Option<f64>,
}

/// Draws the tail chart.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &TailData, style: &Style) -> DrawResult<DB> {
    let runs = |c: &TailCurve| {
        let xs: Vec<f64> = c.percentiles.iter().map(|&p| nines(p)).collect();
        geom::runs(&xs, &c.seconds, geom::linear)
    };
    let references: Vec<_> = data.references.iter().take(2).map(|c| (c, runs(c))).collect();
    let current = data.current.as_ref().map(|c| (c, runs(c)));
    let has_data =
        references.iter().any(|(_, r)| !r.is_empty()) || current.as_ref().is_some_and(|(_, r)| !r.is_empty());

    let positive = |v: &f64| v.is_finite() && *v > 0.0;
    let y_hi = data.y_max_s.filter(positive).unwrap_or_else(|| {
        let all = references.iter().map(|(_, r)| r).chain(current.as_ref().map(|(_, r)| r));
        all.fold(geom::Span::default(), |s, r| s.ys(r)).maybe(data.slo_s).0.map_or(1.0, |(_, hi)| hi * 1.05)
    });
    let metric = if data.metric_label.is_empty() { "latency" } else { data.metric_label.as_str() };
    let fmt_y = |v: f64, _step: f64| format_seconds(v);
    let marks = [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")];
    let fmt_x = |v: f64, _step: f64| {
        marks.iter().find(|(p, _)| (nines(*p) - v).abs() < 1e-6).map_or_else(String::new, |(_, name)| (*name).into())
    };
    let x = Axis {
        lo: nines(0.5),
        hi: nines(0.999),
        ticks: Ticks::Fixed(marks.iter().map(|(p, _)| nines(*p)).collect()),
        format: &fmt_x,
        title: "percentile of requests".into(),
        grid: true,
    };
    let y = Axis { lo: 0.0, hi: y_hi, ticks: Ticks::Nice, format: &fmt_y, title: metric.to_string(), grid: true };
    let t = style.theme();
    // The lower reference in a light shade, the higher in a darker one; the current run bold.
    let shades = [t.series.sky_blue, t.series.blue];
    let mut legend: Vec<Item> = references
        .iter()
        .zip(shades)
        .map(|((c, _), color)| Item { label: c.label.clone(), swatch: Swatch::Line { color, dashed: true } })
        .collect();
    if let Some((c, _)) = &current {
        legend
            .push(Item { label: c.label.clone(), swatch: Swatch::Line { color: t.series.vermillion, dashed: false } });
    }
    let Some(plot) = layout::build_for(area, style, x, y, &legend, has_data)? else {
        return Ok(());
    };
    let slo = data.slo_s.filter(positive);
    if let Some(s) = slo {
        plot.hline(s, t.reference)?;
    }
    for ((_, r), color) in references.iter().zip(shades) {
        plot.line(r, color, 1.75, true)?;
    }
    // Each reference named at its end too, so telling them apart never rests on the shade: above
    // its end, unless the other's name sits there, when the lower curve's goes below its own.
    let pad = plot.frame.px(4.0);
    let ends: Vec<_> = references
        .iter()
        .filter_map(|(c, r)| r.last().and_then(|run| run.last()).filter(|&&(_, y)| y <= y_hi).map(|&p| (c, p)))
        .collect();
    let crowded = match ends.as_slice() {
        [(_, a), (_, b)] => (plot.pixel(*a).1 - plot.pixel(*b).1).abs() < plot.frame.small_font() as i32 + pad,
        _ => false,
    };
    let lowest = ends.iter().map(|(_, (_, y))| *y).fold(f64::INFINITY, f64::min);
    for (c, (x, y)) in &ends {
        let (px, py) = plot.pixel((*x, *y));
        if crowded && *y == lowest {
            plot.text_at(&c.label, (px - pad, py + pad), Pos::new(HPos::Right, VPos::Top))?;
        } else {
            plot.text_at(&c.label, (px - pad, py - pad), Pos::new(HPos::Right, VPos::Bottom))?;
        }
    }
    if let Some((_, r)) = &current {
        plot.line(r, t.series.vermillion, 2.5, false)?;
        // Where the current run's p99 sits, and a note when the tail leaves through the top.
        if let Some(y) = geom::interpolate(r, nines(0.99)) {
            if y <= y_hi {
                plot.dot((nines(0.99), y), t.series.vermillion)?;
            } else {
                let (left, top, right, _) = plot.bounds();
                let (px, _) = plot.pixel((nines(0.99), y_hi));
                let pad = plot.frame.px(4.0);
                let text = format!("p99 {} ↑", format_seconds(y));
                let x = px.clamp(left + plot.label_width(&text), right - pad);
                plot.text_at(&text, (x, top + pad), Pos::new(HPos::Right, VPos::Top))?;
            }
        }
    }
    if let Some(s) = slo {
        plot.hline_label(s, &format!("SLO {}", format_seconds(s)), Side::Left)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters_svg::SVGBackend;

    /// The y of each `<text>` whose content is `label` in an SVG of the chart.
    fn label_ys(data: &TailData, label: &str) -> Vec<f64> {
        let mut out = String::new();
        {
            let area = SVGBackend::with_string(&mut out, (640, 260)).into_drawing_area();
            draw(&area, data, &Style::light(1.0).for_svg()).unwrap();
            area.present().unwrap();
        }
        // Where each sits: its anchor's y, moved by its `dy` (in ex, half the 12 px font).
        let attr = |t: &str, name: &str| -> Option<f64> {
            t.split(&format!(" {name}=\"")).nth(1)?.split(['"', 'e']).next()?.parse().ok()
        };
        out.split("<text")
            .filter(|t| {
                t.split_once('>')
                    .and_then(|(_, rest)| rest.split_once("</text>"))
                    .is_some_and(|(body, _)| body.trim() == label)
            })
            .filter_map(|t| Some(attr(t, "y")? + attr(t, "dy").unwrap_or(0.0) * 6.0))
            .collect()
    }

    #[test]
    fn the_references_names_never_sit_on_each_other() {
        let curve = |label: &str, top: f64| TailCurve {
            label: label.into(),
            percentiles: vec![0.5, 0.9, 0.99, 0.999],
            seconds: vec![0.5, 1.0, 2.0, top],
        };
        let ys = |low: f64, high: f64| {
            let data = TailData {
                references: vec![curve("85%", low), curve("100%", high)],
                y_max_s: Some(10.0),
                ..TailData::default()
            };
            // Each name once (the legend's row is the other), the chart's lower on the page.
            let name = |label| label_ys(&data, label).into_iter().fold(0.0f64, f64::max);
            (name("85%"), name("100%"))
        };
        // Far apart: each above its end, in the order of the curves.
        let (low, high) = ys(2.0, 8.0);
        assert!(low - high > 50.0, "85% at {low}, 100% at {high}");
        // Ends a hair apart: the lower name goes below, a full line away from the other.
        let (low, high) = ys(3.0, 3.1);
        assert!(low - high >= 12.0, "85% at {low}, 100% at {high}: overlapping");
    }

    #[test]
    fn the_grid_runs_from_the_median_to_p999_evenly_in_nines() {
        let g = percentile_grid();
        assert!((g[0] - 0.5).abs() < 1e-12);
        assert!((g.last().unwrap() - 0.999).abs() < 1e-12);
        let steps: Vec<f64> = g.windows(2).map(|w| nines(w[1]) - nines(w[0])).collect();
        assert!(steps.iter().all(|s| (s - steps[0]).abs() < 1e-9));
        assert!((nines(0.99) - 2.0).abs() < 1e-12);
    }
}

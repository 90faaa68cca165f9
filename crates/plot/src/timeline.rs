//! "The two clocks": a Gantt-like view of a few requests. Each row shows the wait in the queue,
//! the prefill, and then the drip of output tokens; one row can carry TTFT and TPOT brackets.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axes::{Axis, Ticks};
use crate::format::{format_seconds, format_tick};
use crate::frame::{self, DrawResult};
use crate::geom::Span;
use crate::layout::{self, Plot};
use crate::legend::{Item, Swatch};
use crate::style::Style;

/// More rows than this stop being readable at 240 CSS px tall; extra requests are ignored.
pub const MAX_ROWS: usize = 12;

/// The timings of one request, in simulated seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestTrace {
    /// Row label, e.g. "req 3" (empty reads "#1", "#2", ... by position).
    pub label: String,
    /// When the request arrived.
    pub arrival_s: f64,
    /// When it was first admitted into a step (end of the queue wait).
    pub scheduled_s: f64,
    /// When its first output token was emitted (end of prefill).
    pub first_token_s: f64,
    /// When every output token was emitted, the first one included.
    pub token_times_s: Vec<f64>,
    /// When the request finished.
    pub finish_s: f64,
}

/// What the timeline chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelineData {
    /// One row per request, top to bottom (at most [`MAX_ROWS`] are drawn).
    pub requests: Vec<RequestTrace>,
    /// The row that gets the TTFT and TPOT brackets.
    pub highlight: Option<usize>,
}

/// Row geometry in display units: each row is 1 tall, the highlighted one taller so its
/// brackets and labels fit above and below its bar.
struct Rows {
    centers: Vec<f64>,
    total: f64,
}

fn rows(n: usize, highlight: Option<usize>, extra: f64) -> Rows {
    let weight = |i| if Some(i) == highlight { 1.0 + 2.0 * extra } else { 1.0 };
    let total: f64 = (0..n).map(weight).sum();
    let mut top = total;
    let centers = (0..n)
        .map(|i| {
            let c = top - weight(i) / 2.0;
            top -= weight(i);
            c
        })
        .collect();
    Rows { centers, total }
}

/// Draws the timeline chart on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &TimelineData, style: &Style) -> DrawResult<DB> {
    // Rows without an arrival cannot be placed; `highlight` and "#n" labels keep counting the
    // caller's rows, so they are kept beside each request.
    let kept: Vec<(usize, &RequestTrace)> =
        data.requests.iter().enumerate().take(MAX_ROWS).filter(|(_, r)| r.arrival_s.is_finite()).collect();
    let highlight = data.highlight.and_then(|h| kept.iter().position(|(i, _)| *i == h));
    let requests: Vec<&RequestTrace> = kept.iter().map(|(_, r)| *r).collect();
    let times = requests.iter().fold(Span::default(), |s, r| {
        s.values(&[r.arrival_s, r.scheduled_s, r.first_token_s, r.finish_s]).values(&r.token_times_s)
    });
    let (t0, t1) = times.0.unwrap_or((0.0, 1.0));
    let span = if t1 > t0 { t1 - t0 } else { 1.0 };
    // Milliseconds read better than "0.25 s" steps when the whole picture is that short.
    let (factor, unit) = if span < 2.0 { (1e3, "ms") } else { (1.0, "s") };
    let to_x = |t: f64| (t - t0) * factor;

    let f = frame::Frame::new(area, style);
    // Estimated plot height (the real one is known only after layout) to size the brackets.
    let est_plot_h = f64::from(f.h - f.px(80.0)).max(1.0);
    let annotation_px = f.small_font() * 1.3 + f64::from(f.px(8.0));
    let n = requests.len().max(1) as f64;
    let extra = if highlight.is_some() {
        (annotation_px * n / (est_plot_h - 2.0 * annotation_px).max(1.0)).clamp(0.3, 2.0)
    } else {
        0.0
    };
    let layout = rows(requests.len(), highlight, extra);
    let labels: Vec<String> = kept
        .iter()
        .map(|&(i, r)| match r.label.chars().count() {
            0 => format!("#{}", i + 1),
            1..=10 => r.label.clone(),
            _ => r.label.chars().take(9).chain(['…']).collect(),
        })
        .collect();
    let fmt_y = |v: f64, _step: f64| {
        let nearest = layout.centers.iter().position(|c| (c - v).abs() < 1e-9).and_then(|i| labels.get(i));
        nearest.cloned().unwrap_or_default()
    };
    let x = Axis {
        lo: 0.0,
        hi: span * factor * 1.02,
        ticks: Ticks::Nice,
        format: &format_tick,
        title: format!("time since first arrival ({unit})"),
        grid: true,
    };
    let y = Axis {
        lo: 0.0,
        hi: layout.total.max(1.0),
        ticks: Ticks::Fixed(layout.centers.clone()),
        format: &fmt_y,
        title: String::new(),
        grid: false,
    };
    let t = style.theme();
    let legend = [
        Item { label: "queue wait".into(), swatch: Swatch::Bar { color: t.series.orange, light: true } },
        Item { label: "prefill".into(), swatch: Swatch::Bar { color: t.series.blue, light: false } },
        Item { label: "tokens".into(), swatch: Swatch::Ticks(t.series.bluish_green) },
    ];
    let Some(plot) = layout::build_for(area, style, x, y, &legend, !requests.is_empty())? else {
        return Ok(());
    };

    // Bars stay a bar, not a slab, when there are only one or two rows.
    let unit_px = {
        let (_, top, _, bottom) = plot.bounds();
        f64::from(bottom - top) / layout.total.max(1.0)
    };
    let half = (0.28_f64).min(f64::from(plot.frame.px(9.0)) / unit_px.max(1.0));
    for (i, (r, &cy)) in requests.iter().zip(&layout.centers).enumerate() {
        let bar = |a: f64, b: f64, style: ShapeStyle| plot.bar((to_x(a), cy + half), (to_x(b), cy - half), style);
        let ok = |a: f64, b: f64| a.is_finite() && b.is_finite() && b >= a;
        if ok(r.arrival_s, r.scheduled_s) && r.scheduled_s > r.arrival_s {
            let orange = t.series.orange;
            bar(r.arrival_s, r.scheduled_s, orange.mix(0.3).filled())?;
            bar(r.arrival_s, r.scheduled_s, orange.stroke_width(plot.frame.stroke(1.0)))?;
        }
        if ok(r.scheduled_s, r.first_token_s) {
            bar(r.scheduled_s, r.first_token_s, t.series.blue.filled())?;
        }
        draw_tokens(&plot, r, cy, half, &to_x)?;
        if Some(i) == highlight {
            annotate(&plot, r, cy, half, &to_x)?;
        }
    }
    Ok(())
}

/// The decode period as a thin line with a tick per token; ticks closer than 2 px merge, so a
/// long answer costs the canvas a few hundred strokes, not thousands.
fn draw_tokens<DB: DrawingBackend>(
    plot: &Plot<DB>,
    r: &RequestTrace,
    cy: f64,
    half: f64,
    to_x: &dyn Fn(f64) -> f64,
) -> DrawResult<DB> {
    let green = plot.frame.theme.series.bluish_green;
    if r.first_token_s.is_finite() && r.finish_s.is_finite() && r.finish_s > r.first_token_s {
        let run = vec![(to_x(r.first_token_s), cy), (to_x(r.finish_s), cy)];
        plot.line(&[run], green, 1.0, false)?;
    }
    let min_gap = plot.frame.px(2.0);
    let mut last_px: Option<i32> = None;
    let tick_half = half * 0.8;
    for &tok in r.token_times_s.iter().filter(|t| t.is_finite()) {
        let x = to_x(tok);
        let px = plot.pixel((x, cy)).0;
        if let Some(last) = last_px
            && (px - last).abs() < min_gap
        {
            continue;
        }
        last_px = Some(px);
        let run = vec![(x, cy - tick_half), (x, cy + tick_half)];
        plot.line(&[run], green, 1.5, false)?;
    }
    Ok(())
}

/// The TTFT bracket (arrival to first token) above the bar and a TPOT bracket (the token drip,
/// first token to last, labelled with the mean gap) below it.
fn annotate<DB: DrawingBackend>(
    plot: &Plot<DB>,
    r: &RequestTrace,
    cy: f64,
    half: f64,
    to_x: &dyn Fn(f64) -> f64,
) -> DrawResult<DB> {
    let text = plot.frame.theme.text;
    let gap = plot.frame.px(4.0);
    let (left, _, right, _) = plot.bounds();
    let label_x = |label: &str, a: i32, b: i32| {
        let tw = plot.label_width(label);
        ((a + b) / 2).clamp(left + tw / 2 + 1, (right - tw / 2 - 1).max(left + tw / 2 + 1))
    };
    if r.first_token_s.is_finite() && r.first_token_s >= r.arrival_s {
        let (a, y) = plot.pixel((to_x(r.arrival_s), cy + half));
        let (b, _) = plot.pixel((to_x(r.first_token_s), cy + half));
        let y = y - gap;
        plot.path_px(vec![(a, y + gap), (a, y), (b, y), (b, y + gap)], text, 1.0)?;
        let label = format!("TTFT {}", format_seconds(r.first_token_s - r.arrival_s));
        let pos = Pos::new(HPos::Center, VPos::Bottom);
        plot.text_at(&label, (label_x(&label, a, b), y - gap / 2), pos)?;
    }
    let tokens: Vec<f64> = r.token_times_s.iter().copied().filter(|t| t.is_finite()).collect();
    if tokens.len() >= 2 {
        // TPOT is the request's mean gap, (last - first token) / (tokens - 1), as vLLM's
        // benchmark defines it: bracket the whole drip rather than one gap, which may be a
        // short decode-only step or a long one carrying a prefill chunk.
        let (t_a, t_b) = (tokens[0], tokens[tokens.len() - 1]);
        let (a, y) = plot.pixel((to_x(t_a), cy - half));
        let (b, _) = plot.pixel((to_x(t_b), cy - half));
        let y = y + gap;
        plot.path_px(vec![(a, y - gap), (a, y), (b, y), (b, y - gap)], text, 1.0)?;
        let mean = (t_b - t_a) / (tokens.len() - 1) as f64;
        let label = if plot.frame.narrow {
            format!("TPOT {} (mean gap)", format_seconds(mean))
        } else {
            format!("TPOT {} = mean gap over {} tokens", format_seconds(mean), tokens.len())
        };
        let pos = Pos::new(HPos::Center, VPos::Top);
        plot.text_at(&label, (label_x(&label, a, b), y + gap / 2), pos)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highlighted_row_is_taller_and_rows_run_top_down() {
        let r = rows(3, Some(1), 0.5);
        assert_eq!(r.total, 4.0);
        assert_eq!(r.centers, vec![3.5, 2.0, 0.5]);
        assert_eq!(rows(0, None, 0.5).total, 0.0);
    }
}

//! The layout every chart shares: sizes from the area and the pixel ratio, room for the legend
//! line above the plot and the axes around it, and the data-to-pixel [`Map`] that follows.
//!
//! Everything is drawn on the caller's root area in pixels; see [`crate::axes`] for why
//! plotters' chart builder is not used.

use std::cell::RefCell;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::axes::{self, Axis, TitleAt};
use crate::geom::{Map, Rect, Run};
use crate::legend::{self, Item};
use crate::style::{Style, Theme};

/// What every `draw` returns: plotters' own error, so callers need no conversion.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Below this width (in CSS px) a chart uses smaller fonts, fewer ticks and shorter labels.
const NARROW_CSS_PX: f64 = 560.0;

/// Sizes for one drawing: everything in CSS px is multiplied by the pixel ratio here.
pub(crate) struct Frame {
    pub w: i32,
    pub h: i32,
    scale: f64,
    font_scale: f64,
    /// True when the area is under [`NARROW_CSS_PX`] CSS px wide.
    pub narrow: bool,
    pub theme: Theme,
}

impl Frame {
    pub fn new<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, style: &Style) -> Self {
        let (w, h) = area.dim_in_pixel();
        let scale = style.safe_scale();
        Self {
            w: w as i32,
            h: h as i32,
            scale,
            font_scale: style.safe_font_scale(),
            narrow: f64::from(w) / scale < NARROW_CSS_PX,
            theme: style.theme(),
        }
    }

    /// CSS px to physical px.
    pub fn px(&self, css: f64) -> i32 {
        (css * self.scale).round() as i32
    }

    /// A stroke width in physical px, never 0 (plotters would draw nothing).
    pub fn stroke(&self, css: f64) -> u32 {
        ((css * self.scale).round() as u32).max(1)
    }

    /// A font size in physical px.
    pub fn font_px(&self, css: f64) -> f64 {
        css * self.scale * self.font_scale
    }

    /// Tick labels, legend and annotations: a size smaller when narrow.
    pub fn small_font(&self) -> f64 {
        self.font_px(if self.narrow { 11.0 } else { 12.0 })
    }

    /// Axis titles.
    pub fn title_font(&self) -> f64 {
        self.font_px(if self.narrow { 12.0 } else { 13.0 })
    }

    pub fn text(&self, size: f64, color: RGBColor) -> TextStyle<'static> {
        (FontFamily::SansSerif, size).into_font().color(&color)
    }
}

/// Width in px of `text` in a sans-serif font of `size` px, from Helvetica-like advance widths.
///
/// Layout measures text this way rather than asking the backend: on wasm plotters measures by
/// inserting a `<span>` into the page and reading its width, a forced reflow per label, dozens
/// per redraw while a slider moves. The estimate errs a little wide, so labels keep their room.
pub(crate) fn text_width(text: &str, size: f64) -> i32 {
    let em: f64 = text
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' => 0.30,
            'f' | 't' | 'r' | '(' | ')' | '-' | '/' | '[' | ']' => 0.38,
            'm' | 'w' | 'M' | 'W' | '%' | '@' | '—' | '…' => 0.90,
            c if c.is_ascii_uppercase() => 0.70,
            _ => 0.58,
        })
        .sum();
    (em * size).ceil() as i32
}

/// A chart's plotting area after layout: where it is, and what has been drawn on it.
pub(crate) struct Plot<'a, DB: DrawingBackend> {
    /// The caller's whole area: plotters only ever sees pixels.
    pub area: &'a DrawingArea<DB, Shift>,
    pub frame: Frame,
    /// Display coordinates to pixels; its range is what is visible, and lines are clipped to it.
    pub map: Map,
    /// Everything drawn so far (display coordinates), for labels to keep clear of.
    pub obstacles: RefCell<Vec<Run>>,
}

/// Fills the background, lays out legend, labels and plot for this area, draws the axes and
/// grid, and returns the plot; `None` when the area is too small to hold a readable chart.
/// [`build`] for a chart that may have nothing to draw: without data there is no legend and the
/// frame gets a "no data" caption. Returns the plot only when there is data to draw on it.
pub(crate) fn build_for<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    style: &Style,
    x: Axis,
    y: Axis,
    legend: &[Item],
    has_data: bool,
) -> Result<Option<Plot<'a, DB>>, DrawingAreaErrorKind<DB::ErrorType>> {
    let Some(plot) = build(area, style, x, y, if has_data { legend } else { &[] })? else {
        return Ok(None);
    };
    if !has_data {
        plot.no_data()?;
        return Ok(None);
    }
    Ok(Some(plot))
}

fn build<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    style: &Style,
    mut x: Axis,
    mut y: Axis,
    legend: &[Item],
) -> Result<Option<Plot<'a, DB>>, DrawingAreaErrorKind<DB::ErrorType>> {
    x.sanitize();
    y.sanitize();
    let frame = Frame::new(area, style);
    area.fill(&frame.theme.background)?;
    let (small, title) = (frame.small_font(), frame.title_font());
    // Tick labels sit twice the tick length from the axis.
    let label_dist = 2 * frame.px(4.0);
    let title_h = |t: &str| if t.is_empty() { 0 } else { title.ceil() as i32 + frame.px(6.0) };
    let (top, right, left, bottom) = (frame.px(6.0), frame.px(16.0), frame.px(4.0), frame.px(2.0));
    let x_area = label_dist + small.ceil() as i32 + title_h(&x.title) + frame.px(2.0);
    let row_h = (small * 1.5).ceil() as i32;

    let y_layout = |plot_h: i32| {
        let max_count = (f64::from(plot_h) / (small * 2.4)).floor() as usize + 1;
        let ticks = y.ticks(max_count.max(2));
        let widest = y.labels(&ticks).iter().map(|l| text_width(l, small)).max().unwrap_or(0);
        let y_area = title_h(&y.title) + widest + label_dist + frame.px(4.0);
        (ticks, y_area)
    };
    // The legend's width depends on the y labels' width, which depends on the plot's height,
    // which depends on the legend's rows: guess one row, then settle.
    let one_row_plot_h = frame.h - top - row_h - x_area - bottom;
    let (_, y_area_guess) = y_layout(one_row_plot_h);
    let legend_avail = frame.w - left - right - y_area_guess;
    let (legend_pos, rows) = legend::layout(&frame, legend, legend_avail);
    let legend_h = rows * row_h + if rows > 0 { frame.px(4.0) } else { 0 };
    let plot_h = frame.h - top - legend_h - x_area - bottom;
    let (y_ticks, y_area) = y_layout(plot_h);
    let y_area = y_area.max(y_area_guess);
    let plot_w = frame.w - left - right - y_area;
    if plot_h < frame.px(40.0) || plot_w < frame.px(60.0) {
        return Ok(None);
    }

    let sample_w = [x.lo, x.hi, (x.lo + x.hi) / 2.0]
        .iter()
        .map(|&v| text_width(&(x.format)(v, (x.hi - x.lo) / 4.0), small))
        .max()
        .unwrap_or(0);
    // Room for each label plus a gap of about one em between neighbours.
    let x_count = plot_w / (sample_w + frame.px(12.0)).max(1) + 1;
    let x_ticks = x.ticks((x_count as usize).max(2));

    let (plot_x, plot_y) = (left + y_area, top + legend_h);
    let range = Rect { x0: x.lo, x1: x.hi, y0: y.lo, y1: y.hi };
    let map = Map { range, bounds: (plot_x, plot_y, plot_x + plot_w, plot_y + plot_h) };
    let at = TitleAt { y_title_left: left, x_title_bottom: frame.h - bottom };
    axes::draw(area, &frame, &map, (&x, &x_ticks), (&y, &y_ticks), at)?;
    legend::draw(area, &frame, legend, &legend_pos, (plot_x, top), row_h)?;
    Ok(Some(Plot { area, frame, map, obstacles: RefCell::new(Vec::new()) }))
}

#[cfg(test)]
mod tests {
    use super::text_width;

    /// Ranges around Helvetica's advance widths at 12 px ("120%" is 30.7 px, "100 ms" 39.3 px).
    #[test]
    fn text_width_is_close_to_a_real_sans_serif() {
        for (text, lo, hi) in
            [("120%", 26, 36), ("100 ms", 34, 46), ("offered load (% of capacity)", 150, 190), ("", 0, 0)]
        {
            let w = text_width(text, 12.0);
            assert!((lo..=hi).contains(&w), "{text:?}: {w}");
        }
        assert_eq!(text_width("p50", 24.0), 2 * text_width("p50", 12.0));
    }
}

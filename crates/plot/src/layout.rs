//! The layout every chart shares: room for the legend line above the plot and the axes around
//! it, sized by the drawing's [`Frame`], and the data-to-pixel [`Map`] that follows.
//!
//! Everything is drawn on the caller's root area in pixels; see [`crate::axes`] for why
//! plotters' chart builder is not used.

use std::cell::RefCell;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::axes::{self, Axis, TitleAt};
use crate::frame::{Frame, text_width};
use crate::geom::{Map, Rect, Run};
use crate::legend::{self, Item};
use crate::style::Style;

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

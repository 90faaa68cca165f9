//! The layout every chart shares: sizes from the area and the pixel ratio, room for the legend
//! line above the plot, and axes with our own ticks.

use std::cell::RefCell;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;

use crate::geom::{Rect, Run};
use crate::legend::{self, Item};
use crate::style::{Style, Theme};

/// What every `draw` returns: plotters' own error, so callers need no conversion.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Both axes are plain f64 ranges with tick positions we choose (log axes are drawn in log10
/// space), which gives the same tick rules on every backend and every chart.
pub(crate) type Coords = Cartesian2d<Scale, Scale>;

/// A linear f64 axis with our own labelled (`major`) and grid-only (`minor`) ticks. plotters'
/// `WithKeyPoints` would do, but it loses the f64 label formatter that the mesh requires.
#[derive(Clone)]
pub(crate) struct Scale {
    lo: f64,
    hi: f64,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl Ranged for Scale {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, (a, b): (i32, i32)) -> i32 {
        let t = if self.hi > self.lo { (v - self.lo) / (self.hi - self.lo) } else { 0.5 };
        // Saturating cast: a stray huge value must not wrap around to the other side.
        (f64::from(a) + t * f64::from(b - a)).round().clamp(-1e6, 1e6) as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() { self.minor.clone() } else { self.major.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

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

/// How an axis places its labelled ticks.
pub(crate) enum Ticks {
    /// Round numbers (1, 2, 2.5, 5 x 10^k), as many as fit.
    Nice,
    /// Values are log10 of the data: decades, thinned or filled in to fit.
    Log,
    /// Exactly these positions (the timeline's rows).
    Fixed(Vec<f64>),
}

/// One axis: display range, tick rule, label formatter and title.
pub(crate) struct Axis<'f> {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Ticks,
    /// Label for a tick at display value `v` when ticks are `step` apart.
    pub format: &'f dyn Fn(f64, f64) -> String,
    pub title: String,
    pub grid: bool,
}

impl Axis<'_> {
    /// Labelled and unlabelled tick positions, at most `max_count` labelled.
    fn key_points(&self, max_count: usize) -> (Vec<f64>, Vec<f64>, f64) {
        match &self.ticks {
            Ticks::Nice => {
                let t = crate::geom::nice_ticks(self.lo, self.hi, max_count);
                let step = crate::geom::nice_step(self.lo, self.hi, max_count.max(2));
                (t, Vec::new(), step)
            }
            Ticks::Log => {
                let (major, minor) = crate::geom::log_ticks(self.lo.floor() as i32, self.hi.ceil() as i32, max_count);
                let keep = |v: &f64| *v >= self.lo - 1e-9 && *v <= self.hi + 1e-9;
                let major: Vec<f64> = major.into_iter().filter(keep).collect();
                let minor = minor.into_iter().filter(keep).collect();
                (major, minor, 1.0)
            }
            Ticks::Fixed(points) => (points.clone(), Vec::new(), 1.0),
        }
    }

    /// Charts compute ranges from finite data, but a range can still overflow (1e308 x 1.1);
    /// an axis that cannot be drawn becomes 0..1 rather than a panic or a blank.
    fn sanitize(&mut self) {
        let span = self.hi - self.lo;
        if !(self.lo.is_finite() && self.hi.is_finite() && span.is_finite() && span > 0.0) {
            (self.lo, self.hi) = (0.0, 1.0);
        }
    }

    fn labels(&self, points: &[f64], step: f64) -> Vec<String> {
        points.iter().map(|&v| (self.format)(v, step)).collect()
    }
}

/// A chart's plotting area after layout, with helpers that draw in display coordinates.
pub(crate) struct Plot<'a, DB: DrawingBackend> {
    pub chart: ChartContext<'a, DB, Coords>,
    pub frame: Frame,
    /// The visible display range: lines are clipped to it.
    pub rect: Rect,
    /// Everything drawn so far (display coordinates), for labels to keep clear of.
    pub obstacles: RefCell<Vec<Run>>,
}

/// Fills the background, lays out legend, labels and plot for this area, draws the axes and
/// grid, and returns the plot; `None` when the area is too small to hold a readable chart.
pub(crate) fn build<'a, DB: DrawingBackend>(
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
    let tick_style = frame.text(small, frame.theme.text);
    let title_style = frame.text(title, frame.theme.text);
    let tick_mark = frame.px(4.0);
    // plotters puts tick labels twice the tick length away from the axis.
    let label_dist = 2 * tick_mark;
    let title_h = |t: &str| if t.is_empty() { 0 } else { title.ceil() as i32 + frame.px(6.0) };
    let (top, right, left, bottom) = (frame.px(6.0), frame.px(16.0), frame.px(4.0), frame.px(2.0));
    let x_area = label_dist + small.ceil() as i32 + title_h(&x.title) + frame.px(2.0);
    let row_h = (small * 1.5).ceil() as i32;

    let y_layout = |plot_h: i32| {
        let max_count = (f64::from(plot_h) / (small * 2.4)).floor() as usize + 1;
        let (major, minor, step) = y.key_points(max_count.max(2));
        let labels = y.labels(&major, step);
        let widest = labels.iter().map(|l| text_width(l, small)).max().unwrap_or(0);
        let y_area = title_h(&y.title) + widest + label_dist + frame.px(4.0);
        (major, minor, step, y_area)
    };
    // The legend's width depends on the y labels' width, which depends on the plot's height,
    // which depends on the legend's rows: guess one row, then settle.
    let one_row_plot_h = frame.h - top - row_h - x_area - bottom;
    let (_, _, _, y_area_guess) = y_layout(one_row_plot_h);
    let legend_avail = frame.w - left - right - y_area_guess;
    let (legend_pos, rows) = legend::layout(&frame, legend, legend_avail);
    let legend_h = rows * row_h + if rows > 0 { frame.px(4.0) } else { 0 };
    let plot_h = frame.h - top - legend_h - x_area - bottom;
    let (y_major, y_minor, y_step, y_area) = y_layout(plot_h);
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
    let (x_major, x_minor, x_step) = x.key_points((x_count as usize).max(2));

    let mut chart = ChartBuilder::on(area)
        .margin_top(top + legend_h)
        .margin_right(right)
        .margin_left(left)
        .margin_bottom(bottom)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(
            Scale { lo: x.lo, hi: x.hi, major: x_major, minor: x_minor },
            Scale { lo: y.lo, hi: y.hi, major: y_major, minor: y_minor },
        )?;
    let fx = |v: &f64| (x.format)(*v, x_step);
    let fy = |v: &f64| (y.format)(*v, y_step);
    let grid = frame.theme.grid;
    let mut mesh = chart.configure_mesh();
    mesh.bold_line_style(grid.stroke_width(frame.stroke(1.0)))
        .light_line_style(grid.mix(0.45).stroke_width(frame.stroke(1.0)))
        .axis_style(frame.theme.axis.stroke_width(frame.stroke(1.0)))
        .label_style(tick_style.clone())
        .axis_desc_style(title_style)
        .set_all_tick_mark_size(tick_mark)
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .x_desc(x.title.clone())
        .y_desc(y.title.clone());
    if !x.grid {
        mesh.disable_x_mesh();
    }
    if !y.grid {
        mesh.disable_y_mesh();
    }
    mesh.draw()?;

    legend::draw(area, &frame, legend, &legend_pos, (left + y_area, top), row_h)?;
    let rect = Rect { x0: x.lo, x1: x.hi, y0: y.lo, y1: y.hi };
    Ok(Some(Plot { chart, frame, rect, obstacles: RefCell::new(Vec::new()) }))
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

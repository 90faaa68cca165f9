//! Axes drawn by hand in pixels: grid, axis lines, tick marks, tick labels and titles.
//!
//! plotters' mesh (`ChartBuilder`, `configure_mesh`) would draw these, but it costs the page
//! far more than it saves: generic coordinate and label code in the wasm, and on a canvas
//! plotters positions every label by measuring it in the page (a `<span>` inserted and read
//! back, a forced layout per label on every redraw while a slider moves). Here each text is
//! placed by an anchor the backend resolves itself (canvas textAlign/textBaseline, SVG
//! text-anchor), and widths come from [`text_width`]. Lines are filled rectangles on whole
//! pixels: crisp on a canvas at any pixel ratio, where a 1 px stroke on a pixel edge blurs.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::frame::{DrawResult, Frame, text_width};
use crate::geom::Map;

/// How an axis places its labelled ticks.
pub(crate) enum Ticks {
    /// Round numbers (1, 2, 2.5, 5 x 10^k), as many as fit.
    Nice,
    /// Values are log10 of the data: decades, thinned or filled in to fit.
    Log,
    /// Exactly these positions (the timeline's rows).
    Fixed(Vec<f64>),
    /// Round whole numbers only: counts (replicas, requests) have no 2.5.
    Whole,
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

/// An axis's tick positions: labelled (`major`), grid-only (`minor`), and the step between
/// labelled ticks that the formatter is told.
pub(crate) struct TickSet {
    pub major: Vec<f64>,
    pub minor: Vec<f64>,
    pub step: f64,
}

impl Axis<'static> {
    /// A requests-per-second axis from 0 to `hi`, gridded, titled for the chart's width.
    pub fn rate(hi: f64, narrow: bool) -> Self {
        Axis {
            lo: 0.0,
            hi,
            ticks: Ticks::Nice,
            format: &crate::format::format_tick,
            title: if narrow { "req/s" } else { "requests/s" }.into(),
            grid: true,
        }
    }
}

impl Axis<'_> {
    /// Tick positions with at most `max_count` labelled.
    pub fn ticks(&self, max_count: usize) -> TickSet {
        match &self.ticks {
            Ticks::Nice => TickSet {
                major: nice_ticks(self.lo, self.hi, max_count),
                minor: Vec::new(),
                step: nice_step(self.lo, self.hi, max_count.max(2)),
            },
            Ticks::Log => {
                let (major, minor) = log_ticks(self.lo.floor() as i32, self.hi.ceil() as i32, max_count);
                let keep = |v: &f64| *v >= self.lo - 1e-9 && *v <= self.hi + 1e-9;
                TickSet {
                    major: major.into_iter().filter(keep).collect(),
                    minor: minor.into_iter().filter(keep).collect(),
                    step: 1.0,
                }
            }
            Ticks::Fixed(points) => TickSet { major: points.clone(), minor: Vec::new(), step: 1.0 },
            Ticks::Whole => {
                let nice = nice_step(self.lo, self.hi, max_count.max(2)).max(1.0);
                // 2.5 x 10^k is whole from 25 up; below that the next round step is.
                let step = if nice.fract() == 0.0 { nice } else { nice * 2.0 };
                let (first, last) = ((self.lo / step - 1e-9).ceil() as i64, (self.hi / step + 1e-9).floor() as i64);
                TickSet { major: (first..=last).map(|i| i as f64 * step).collect(), minor: Vec::new(), step }
            }
        }
    }

    /// Charts compute ranges from finite data, but a range can still overflow (1e308 x 1.1);
    /// an axis that cannot be drawn becomes 0..1 rather than a panic or a blank.
    pub fn sanitize(&mut self) {
        let span = self.hi - self.lo;
        if !(self.lo.is_finite() && self.hi.is_finite() && span.is_finite() && span > 0.0) {
            (self.lo, self.hi) = (0.0, 1.0);
        }
    }

    pub fn labels(&self, ticks: &TickSet) -> Vec<String> {
        ticks.major.iter().map(|&v| (self.format)(v, ticks.step)).collect()
    }
}

/// Where the axis titles go: the left edge of the y title and the bottom of the x title.
pub(crate) struct TitleAt {
    pub y_title_left: i32,
    pub x_title_bottom: i32,
}

/// Draws both axes around the plot `map` covers: grid first so the axes sit on top of it.
pub(crate) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame,
    map: &Map,
    (x, x_ticks): (&Axis, &TickSet),
    (y, y_ticks): (&Axis, &TickSet),
    at: TitleAt,
) -> DrawResult<DB> {
    let (left, top, right, bottom) = map.bounds;
    let s = frame.stroke(1.0) as i32;
    let tick = frame.px(4.0);
    let label_dist = 2 * tick;
    let t = frame.theme;
    let fill = |(x0, y0): (i32, i32), (x1, y1): (i32, i32), color: ShapeStyle| {
        area.draw(&Rectangle::new([(x0, y0), (x1, y1)], color))
    };
    // A line `s` wide centred on pixel `c`: the same rows or columns for a grid line, its
    // tick mark and (for a width of 2) a data line stroked through `c`.
    let band = |c: i32| (c - s / 2, c - s / 2 + s);
    let x_px = |v: f64| map.pixel((v, map.range.y0)).0;
    let y_px = |v: f64| map.pixel((map.range.x0, v)).1;
    let light = t.grid.mix(0.45).filled();

    // Grid lines on the axes themselves would only thicken them.
    for (points, style) in [(&x_ticks.minor, light), (&x_ticks.major, t.grid.filled())] {
        for px in points.iter().map(|&v| x_px(v)).filter(|&px| x.grid && px > left) {
            let (a, b) = band(px);
            fill((a, top), (b, bottom), style)?;
        }
    }
    for (points, style) in [(&y_ticks.minor, light), (&y_ticks.major, t.grid.filled())] {
        for py in points.iter().map(|&v| y_px(v)).filter(|&py| y.grid && py < bottom - 1) {
            let (a, b) = band(py);
            fill((left, a), (right, b), style)?;
        }
    }

    // The axes meet in a closed corner just outside the plot, so no data pixel is hidden.
    let axis = t.axis.filled();
    fill((left - s, top), (left, bottom + s), axis)?;
    fill((left - s, bottom), (right, bottom + s), axis)?;

    let small = frame.small_font();
    let label_style = frame.text(small, t.text);
    let half_h = (small / 2.0).ceil() as i32;
    let y_label = label_style.pos(Pos::new(HPos::Right, VPos::Center));
    for (&v, label) in y_ticks.major.iter().zip(y.labels(y_ticks)) {
        let py = y_px(v);
        let (a, b) = band(py);
        fill((left - s - tick, a), (left - s, b), axis)?;
        // Kept on the canvas: a label at the very top would otherwise lose its upper half.
        let cy = py.clamp(half_h, (frame.h - half_h).max(half_h));
        area.draw(&Text::new(label, (left - label_dist, cy), y_label.clone()))?;
    }
    let x_label = label_style.pos(Pos::new(HPos::Center, VPos::Top));
    for (&v, label) in x_ticks.major.iter().zip(x.labels(x_ticks)) {
        let px = x_px(v);
        let (a, b) = band(px);
        fill((a, bottom + s), (b, bottom + s + tick), axis)?;
        // The last label ("120%") would hang past the right edge when the margin is narrow.
        let half_w = text_width(&label, small) / 2 + 1;
        let cx = px.clamp(half_w, (frame.w - half_w).max(half_w));
        area.draw(&Text::new(label, (cx, bottom + label_dist), x_label.clone()))?;
    }

    let title_style = frame.text(frame.title_font(), t.text);
    if !x.title.is_empty() {
        let style = title_style.pos(Pos::new(HPos::Center, VPos::Bottom));
        area.draw(&Text::new(x.title.as_str(), ((left + right) / 2, at.x_title_bottom), style))?;
    }
    if !y.title.is_empty() {
        // Turned to read bottom to top, so the glyphs' tops face the canvas edge and sit on
        // the left margin.
        let style = title_style.transform(FontTransform::Rotate270).pos(Pos::new(HPos::Center, VPos::Top));
        area.draw(&Text::new(y.title.as_str(), (at.y_title_left, (top + bottom) / 2), style))?;
    }
    Ok(())
}

/// Up to `max_count` round ticks (steps 1, 2, 2.5 or 5 x 10^k) inside [lo, hi].
pub(crate) fn nice_ticks(lo: f64, hi: f64, max_count: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return if lo.is_finite() { vec![lo] } else { Vec::new() };
    }
    let step = nice_step(lo, hi, max_count.max(2));
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// The step `nice_ticks` uses for [lo, hi].
pub(crate) fn nice_step(lo: f64, hi: f64, max_count: usize) -> f64 {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let start = libm::log10(span / max_count as f64).floor() as i32 - 1;
    // Bounded: a step 1e3 times the span always fits, so this ends well before the bound.
    for exponent in start..start.saturating_add(8) {
        for m in [1.0, 2.0, 2.5, 5.0] {
            let step = m * libm::pow(10.0, f64::from(exponent));
            let count = (hi / step + 1e-9).floor() - (lo / step - 1e-9).ceil() + 1.0;
            if count <= max_count as f64 {
                return step;
            }
        }
    }
    span
}

/// Ticks for a log10 axis spanning decades `lo_dec..=hi_dec`, in display (log10) space:
/// labelled ticks (decades, skipping some when crowded; with 2 and 5 added when there is
/// room) and unlabelled minor ticks (2..9 x 10^k) for faint grid lines that say "log".
pub(crate) fn log_ticks(lo_dec: i32, hi_dec: i32, max_count: usize) -> (Vec<f64>, Vec<f64>) {
    let decades = (hi_dec - lo_dec).max(0) as usize;
    let every = decades / max_count.max(2) + 1;
    let with_25 = (decades + 1) * 3 <= max_count + 2;
    // Built in ascending order, so nothing needs sorting (see `sort_by_x` for why that matters).
    let (mut major, mut minor) = (Vec::new(), Vec::new());
    for d in lo_dec..=hi_dec {
        if ((d - lo_dec) as usize).is_multiple_of(every) {
            major.push(f64::from(d));
        }
        if d == hi_dec {
            break;
        }
        for m in 2..=9 {
            let v = f64::from(d) + libm::log10(f64::from(m));
            if with_25 && (m == 2 || m == 5) {
                major.push(v);
            } else {
                minor.push(v);
            }
        }
    }
    (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks_fit_the_count() {
        for (lo, hi, n, expected) in [
            (0.0, 1.2, 7, vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2]),
            (0.0, 1.2, 5, vec![0.0, 0.25, 0.5, 0.75, 1.0]),
            (0.0, 1.2, 3, vec![0.0, 0.5, 1.0]),
            (0.0, 70.0, 6, vec![0.0, 20.0, 40.0, 60.0]),
            (2.0, 2.0, 5, vec![2.0]),
            (f64::NAN, 1.0, 5, vec![]),
        ] {
            let got = nice_ticks(lo, hi, n);
            assert!(got.len() <= n.max(1), "{lo}..{hi}: {got:?}");
            assert_eq!(got.len(), expected.len(), "{lo}..{hi}: {got:?}");
            for (g, e) in got.iter().zip(&expected) {
                assert!((g - e).abs() < 1e-9, "{lo}..{hi}: {got:?}");
            }
        }
    }

    #[test]
    fn whole_ticks_are_whole() {
        for (hi, n) in [(17.9, 8), (1.1, 6), (3.4, 12), (240.0, 7), (9.0, 4)] {
            let axis = Axis {
                lo: 0.0,
                hi,
                ticks: Ticks::Whole,
                format: &crate::format::format_tick,
                title: "".into(),
                grid: true,
            };
            let ticks = axis.ticks(n).major;
            assert!(ticks.iter().all(|t| t.fract() == 0.0), "{hi}: {ticks:?}");
            assert!(ticks.len() <= n && ticks.len() >= 2, "{hi} in {n}: {ticks:?}");
        }
    }

    #[test]
    fn log_ticks_thin_out_and_fill_in() {
        let (major, minor) = log_ticks(-1, 2, 6);
        assert_eq!(major, vec![-1.0, 0.0, 1.0, 2.0]);
        assert_eq!(minor.len(), 3 * 8);
        let (major, _) = log_ticks(-2, 3, 3);
        assert_eq!(major, vec![-2.0, 0.0, 2.0]);
        let (major, minor) = log_ticks(-1, 1, 12);
        assert!(major.windows(2).all(|w| w[0] < w[1]) && minor.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(major.len(), 7);
        let (major, _) = log_ticks(-1, 0, 6);
        let labels: Vec<String> = major.iter().map(|v| crate::format_seconds(libm::pow(10.0, *v))).collect();
        assert_eq!(labels, ["100 ms", "200 ms", "500 ms", "1 s"]);
    }
}

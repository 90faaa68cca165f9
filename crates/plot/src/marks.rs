//! What charts draw on a laid-out plot: data lines and areas, reference lines, markers, and
//! labels that find a spot clear of everything drawn before them.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::frame::DrawResult;
use crate::geom::{Rect, Run};
use crate::layout::Plot;

/// Where a horizontal reference line puts its label.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Side {
    Left,
    Right,
}

impl<DB: DrawingBackend> Plot<'_, DB> {
    /// Pixel of a display point on the caller's area.
    pub fn pixel(&self, p: (f64, f64)) -> (i32, i32) {
        self.map.pixel(p)
    }

    /// The plot's pixels as a half-open box (left, top, right, bottom).
    pub fn bounds(&self) -> (i32, i32, i32, i32) {
        self.map.bounds
    }

    pub fn note_style(&self) -> TextStyle<'static> {
        self.frame.text(self.frame.small_font(), self.frame.theme.text)
    }

    /// Width of an annotation label in px (see [`crate::frame::text_width`]).
    pub fn label_width(&self, text: &str) -> i32 {
        crate::frame::text_width(text, self.frame.small_font())
    }

    /// A data line: runs are clipped to the plot, and a lone point becomes a dot so it shows.
    pub fn line(&self, runs: &[Run], color: RGBColor, width_css: f64, dashed: bool) -> DrawResult<DB> {
        let style = color.stroke_width(self.frame.stroke(width_css));
        let clipped = self.map.range.clip(runs);
        self.obstacles.borrow_mut().extend(clipped.iter().cloned());
        for run in clipped {
            if let [only] = run.as_slice() {
                let r = self.frame.px(width_css * 1.5).max(2);
                self.area.draw(&Circle::new(self.pixel(*only), r, color.filled()))?;
            } else if dashed {
                let (on, off) = (self.frame.px(6.0), self.frame.px(4.0));
                self.area.draw(&DashedPathElement::new(self.map.pixels(&run), on, off, style))?;
            } else {
                self.area.draw(&PathElement::new(self.map.pixels(&run), style))?;
            }
        }
        Ok(())
    }

    /// The region between runs and zero (or the nearest plot edge), filled with a light tint.
    pub fn area(&self, runs: &[Run], color: RGBColor) -> DrawResult<DB> {
        let base = self.map.range.y0.max(0.0_f64.min(self.map.range.y1));
        for run in self.map.range.clip(runs) {
            if run.len() < 2 {
                continue;
            }
            let mut polygon = run.clone();
            polygon.push((run[run.len() - 1].0, base));
            polygon.push((run[0].0, base));
            self.area.draw(&Polygon::new(self.map.pixels(&polygon), color.mix(0.25).filled()))?;
        }
        Ok(())
    }

    /// A horizontal dashed reference line across the plot (label it with `hline_label`).
    pub fn hline(&self, y: f64, color: RGBColor) -> DrawResult<DB> {
        let run = vec![(self.map.range.x0, y), (self.map.range.x1, y)];
        self.line(&[run], color, 1.0, true)
    }

    /// A vertical line over the full plot height (label it with `vline_label`).
    pub fn vline(&self, x: f64, color: RGBColor, width_css: f64, dashed: bool) -> DrawResult<DB> {
        let run = vec![(x, self.map.range.y0), (x, self.map.range.y1)];
        self.line(&[run], color, width_css, dashed)
    }

    /// Labels a horizontal line just above it (below when above is taken), at the preferred
    /// end first. Call after drawing the series so the label can dodge them.
    pub fn hline_label(&self, y: f64, text: &str, prefer: Side) -> DrawResult<DB> {
        if !(self.map.range.y0..=self.map.range.y1).contains(&y) {
            return Ok(());
        }
        let (left, _, right, _) = self.bounds();
        let (_, py) = self.pixel((self.map.range.x0, y));
        let pad = self.frame.px(4.0);
        let ends = match prefer {
            Side::Left => [(left + pad, HPos::Left), (right - pad, HPos::Right)],
            Side::Right => [(right - pad, HPos::Right), (left + pad, HPos::Left)],
        };
        let mut candidates = Vec::new();
        for (ty, v) in [(py - pad / 2, VPos::Bottom), (py + pad / 2, VPos::Top)] {
            for (tx, h) in ends {
                candidates.push(((tx, ty), Pos::new(h, v)));
            }
        }
        self.place_label(text, &candidates)
    }

    /// Labels a vertical line beside it, at the top (left side first), else at the bottom.
    pub fn vline_label(&self, x: f64, text: &str) -> DrawResult<DB> {
        if !(self.map.range.x0..=self.map.range.x1).contains(&x) {
            return Ok(());
        }
        let (_, top, _, bottom) = self.bounds();
        let (px, _) = self.pixel((x, self.map.range.y1));
        let pad = self.frame.px(4.0);
        let mut candidates = Vec::new();
        for (ty, v) in [(top + pad / 2, VPos::Top), (bottom - pad / 2, VPos::Bottom)] {
            for (tx, hp) in [(px - pad, HPos::Right), (px + pad, HPos::Left)] {
                candidates.push(((tx, ty), Pos::new(hp, v)));
            }
        }
        self.place_label(text, &candidates)
    }

    /// Draws `text` at the first candidate (pixel anchor, alignment) whose box stays inside
    /// the plot and touches no line or dot drawn so far; the first inside the plot otherwise.
    fn place_label(&self, text: &str, candidates: &[((i32, i32), Pos)]) -> DrawResult<DB> {
        let tw = self.label_width(text) + self.frame.px(2.0);
        let th = self.frame.small_font().ceil() as i32;
        let (left, top, right, bottom) = self.bounds();
        let boxes: Vec<_> = candidates
            .iter()
            .map(|&((x, y), pos)| {
                let x0 = match pos.h_pos {
                    HPos::Left => x,
                    HPos::Center => x - tw / 2,
                    HPos::Right => x - tw,
                };
                let y0 = match pos.v_pos {
                    VPos::Top => y,
                    VPos::Center => y - th / 2,
                    VPos::Bottom => y - th,
                };
                (x0, y0, x0 + tw, y0 + th)
            })
            .collect();
        // A few pixels past the frame still read as inside (the text box is generous).
        let tol = self.frame.px(3.0);
        let inside = |b: &(i32, i32, i32, i32)| {
            b.0 >= left - tol && b.1 >= top - tol && b.2 <= right + tol && b.3 <= bottom + tol
        };
        let chosen = boxes
            .iter()
            .position(|b| inside(b) && self.is_clear(*b))
            .or_else(|| boxes.iter().position(inside))
            .unwrap_or(0);
        let Some(&(at, pos)) = candidates.get(chosen) else {
            return Ok(());
        };
        self.text_at(text, at, pos)
    }

    /// True when no registered line or dot crosses the pixel box (x0, y0, x1, y1).
    fn is_clear(&self, (x0, y0, x1, y1): (i32, i32, i32, i32)) -> bool {
        let bx = Rect { x0: f64::from(x0), x1: f64::from(x1), y0: f64::from(y0), y1: f64::from(y1) };
        let margin = f64::from(self.frame.px(6.0));
        let near = Rect { x0: bx.x0 - margin, x1: bx.x1 + margin, y0: bx.y0 - margin, y1: bx.y1 + margin };
        let to_px = |p: (f64, f64)| {
            let (x, y) = self.pixel(p);
            (f64::from(x), f64::from(y))
        };
        self.obstacles.borrow().iter().all(|run| match run.as_slice() {
            [only] => !near.contains(to_px(*only)),
            _ => run.windows(2).all(|s| bx.clip_segment(to_px(s[0]), to_px(s[1])).is_none()),
        })
    }

    /// A marker dot with a ring in the background colour, so it stands out on its own line.
    pub fn dot(&self, p: (f64, f64), color: RGBColor) -> DrawResult<DB> {
        if !self.map.range.contains(p) {
            return Ok(());
        }
        self.obstacles.borrow_mut().push(vec![p]);
        let bg = self.frame.theme.background;
        let at = self.pixel(p);
        self.area.draw(&Circle::new(at, self.frame.px(6.0), bg.filled()))?;
        self.area.draw(&Circle::new(at, self.frame.px(4.5), color.filled()))
    }

    /// A marker for a value above the plot's top at `x`: a triangle on the top edge pointing up,
    /// and `text` (the value) beside it when given, so the slider's dot does not just vanish
    /// when the tail leaves the chart.
    pub fn dot_above(&self, x: f64, color: RGBColor, text: Option<&str>) -> DrawResult<DB> {
        if !(self.map.range.x0..=self.map.range.x1).contains(&x) {
            return Ok(());
        }
        self.obstacles.borrow_mut().push(vec![(x, self.map.range.y1)]);
        let (px, top) = self.pixel((x, self.map.range.y1));
        let (h, pad) = (self.frame.px(7.0), self.frame.px(4.0));
        let bg = self.frame.theme.background;
        let ring = self.frame.px(1.5);
        let triangle =
            |grow: i32| vec![(px, top - grow), (px - h - grow, top + h + grow), (px + h + grow, top + h + grow)];
        self.area.draw(&Polygon::new(triangle(ring), bg.filled()))?;
        self.area.draw(&Polygon::new(triangle(0), color.filled()))?;
        let Some(text) = text else { return Ok(()) };
        // Beside the triangle, on whichever side has room for it.
        let (_, _, right, _) = self.bounds();
        let room = right - (px + h + 2 * pad);
        let (at, anchor) = if room >= self.label_width(text) {
            ((px + h + pad, top + h / 2), HPos::Left)
        } else {
            ((px - h - pad, top + h / 2), HPos::Right)
        };
        self.text_at(text, at, Pos::new(anchor, VPos::Center))
    }

    /// Text at a pixel of the caller's area, anchored by `pos` (which the backend resolves
    /// itself: nothing measures the text).
    pub fn text_at(&self, text: &str, at: (i32, i32), pos: Pos) -> DrawResult<DB> {
        self.area.draw(&Text::new(text, at, self.note_style().pos(pos)))
    }

    /// A polyline in pixels of the caller's area (annotations).
    pub fn path_px(&self, points: Vec<(i32, i32)>, color: RGBColor, width_css: f64) -> DrawResult<DB> {
        self.area.draw(&PathElement::new(points, color.stroke_width(self.frame.stroke(width_css))))
    }

    /// A filled box between two display points (the timeline's bars).
    pub fn bar(&self, a: (f64, f64), b: (f64, f64), style: ShapeStyle) -> DrawResult<DB> {
        self.area.draw(&Rectangle::new([self.pixel(a), self.pixel(b)], style))
    }

    /// The caption shown instead of series when nothing can be drawn.
    pub fn no_data(&self) -> DrawResult<DB> {
        let (left, top, right, bottom) = self.bounds();
        let style =
            self.frame.text(self.frame.title_font(), self.frame.theme.muted).pos(Pos::new(HPos::Center, VPos::Center));
        self.area.draw(&Text::new("no data", ((left + right) / 2, (top + bottom) / 2), style))
    }
}

//! Sizes for one drawing, from the area and the pixel ratio: pixels, strokes, fonts and the
//! width of a label, which the layout ([`crate::layout`]) and every part it draws measure by.

use plotters::coord::Shift;
use plotters::prelude::*;

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

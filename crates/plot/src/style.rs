//! Device pixel ratio, light or dark, and the colours every chart shares.

use plotters::style::RGBColor;

/// plotters' SVG backend writes `font-size = size / 1.24` while the canvas backend uses `size`
/// pixels; set [`Style::font_scale`] to this for SVG output so text matches the page.
pub const SVG_FONT_SCALE: f64 = 1.24;

/// How to draw: the device pixel ratio and the colour scheme.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    /// Device pixel ratio: font sizes, stroke widths and marker sizes are multiplied by it.
    pub scale: f64,
    /// Dark background with light text when true.
    pub dark: bool,
    /// Extra factor for font sizes only (1.0 for canvas, [`SVG_FONT_SCALE`] for SVG files).
    pub font_scale: f64,
    /// A host page's own colours over the scheme's (its `--kl-*` custom properties).
    pub chrome: Chrome,
}

/// The colours a host page may set over a scheme's: a chart then sits on the page's background
/// in its text colour. Series colours keep their roles and are never overridden.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Chrome {
    /// Canvas background (`--kl-bg`).
    pub background: Option<RGBColor>,
    /// Text and the slider's marker (`--kl-fg`).
    pub text: Option<RGBColor>,
    /// Secondary text (`--kl-muted`).
    pub muted: Option<RGBColor>,
    /// Grid lines (`--kl-grid`).
    pub grid: Option<RGBColor>,
}

impl Chrome {
    /// Reads up to four colours as `0xRRGGBB` numbers (background, text, muted, grid); anything
    /// else (a negative number, say) keeps the scheme's.
    pub fn from_rgb(values: &[f64]) -> Chrome {
        let colour = |i: usize| {
            let v = *values.get(i)?;
            (0.0..=16_777_215.0).contains(&v).then(|| {
                let v = v as u32;
                RGBColor((v >> 16) as u8, (v >> 8) as u8, v as u8)
            })
        };
        Chrome { background: colour(0), text: colour(1), muted: colour(2), grid: colour(3) }
    }
}

impl Style {
    /// Light scheme at the given device pixel ratio.
    pub fn light(scale: f64) -> Self {
        Self { scale, dark: false, font_scale: 1.0, chrome: Chrome::default() }
    }

    /// Dark scheme at the given device pixel ratio.
    pub fn dark(scale: f64) -> Self {
        Self { scale, dark: true, font_scale: 1.0, chrome: Chrome::default() }
    }

    /// The same style with text sized for plotters' SVG backend (see [`SVG_FONT_SCALE`]).
    pub fn for_svg(self) -> Self {
        Self { font_scale: SVG_FONT_SCALE, ..self }
    }

    /// The same style with a host page's colours over the scheme's.
    pub fn with_chrome(self, chrome: Chrome) -> Self {
        Self { chrome, ..self }
    }

    /// The colours of this scheme, with the host page's chrome over them.
    pub fn theme(&self) -> Theme {
        let mut t = if self.dark { Theme::DARK } else { Theme::LIGHT };
        let c = self.chrome;
        t.background = c.background.unwrap_or(t.background);
        t.text = c.text.unwrap_or(t.text);
        t.marker = c.text.unwrap_or(t.marker);
        t.muted = c.muted.unwrap_or(t.muted);
        t.grid = c.grid.unwrap_or(t.grid);
        t
    }

    /// The scale actually used: a non-finite or non-positive ratio would hide or explode the
    /// chart, so it falls back to 1.
    pub(crate) fn safe_scale(&self) -> f64 {
        if self.scale.is_finite() && self.scale > 0.0 { self.scale.min(8.0) } else { 1.0 }
    }

    /// Like [`Style::safe_scale`], for the font-only factor.
    pub(crate) fn safe_font_scale(&self) -> f64 {
        if self.font_scale.is_finite() && self.font_scale > 0.0 { self.font_scale.min(4.0) } else { 1.0 }
    }
}

impl Default for Style {
    fn default() -> Self {
        Self::light(1.0)
    }
}

/// Colour-blind-safe series colours (Okabe-Ito), each with one role in every chart.
///
/// | field | role |
/// |---|---|
/// | `blue` | the typical or served quantity: p50, throughput, `num_requests_running`, prefill |
/// | `vermillion` | what the SLO judges: p99, goodput |
/// | `orange` | waiting: `num_requests_waiting`, queue wait before the first step |
/// | `bluish_green` | output tokens as they are emitted |
/// | `reddish_purple` | the knee |
/// | `sky_blue` | light fills behind the blue series |
///
/// Where an Okabe-Ito colour is under 3:1 against the background (orange on white) or dim on
/// dark (blue on #111827), the scheme uses a darker or lighter tint of the same hue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Palette {
    /// p50, throughput, running, prefill.
    pub blue: RGBColor,
    /// p99, goodput.
    pub vermillion: RGBColor,
    /// Waiting requests and queue wait.
    pub orange: RGBColor,
    /// Output tokens.
    pub bluish_green: RGBColor,
    /// The knee.
    pub reddish_purple: RGBColor,
    /// Light fills behind blue series.
    pub sky_blue: RGBColor,
}

/// Every colour a chart uses, for one scheme.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Theme {
    /// Canvas background.
    pub background: RGBColor,
    /// Tick labels, axis titles, legend text, annotation text.
    pub text: RGBColor,
    /// Secondary text such as the "no data" caption.
    pub muted: RGBColor,
    /// Grid lines.
    pub grid: RGBColor,
    /// Axis lines and tick marks.
    pub axis: RGBColor,
    /// Reference lines: SLO, capacity, max-num-seqs, offered load.
    pub reference: RGBColor,
    /// The marker of the slider's current load.
    pub marker: RGBColor,
    /// Series colours.
    pub series: Palette,
}

impl Theme {
    /// The light scheme (white background).
    pub const LIGHT: Theme = Theme {
        background: RGBColor(0xFF, 0xFF, 0xFF),
        text: RGBColor(0x1F, 0x29, 0x37),
        muted: RGBColor(0x4B, 0x55, 0x63),
        grid: RGBColor(0xE5, 0xE7, 0xEB),
        axis: RGBColor(0x6B, 0x72, 0x80),
        reference: RGBColor(0x4B, 0x55, 0x63),
        marker: RGBColor(0x1F, 0x29, 0x37),
        series: Palette {
            blue: RGBColor(0x00, 0x72, 0xB2),
            vermillion: RGBColor(0xD5, 0x5E, 0x00),
            // #E69F00 is 2.2:1 on white: too faint for a line.
            orange: RGBColor(0xB0, 0x7A, 0x00),
            bluish_green: RGBColor(0x00, 0x9E, 0x73),
            reddish_purple: RGBColor(0xCC, 0x79, 0xA7),
            sky_blue: RGBColor(0x56, 0xB4, 0xE9),
        },
    };

    /// The dark scheme (#111827 background).
    pub const DARK: Theme = Theme {
        background: RGBColor(0x11, 0x18, 0x27),
        text: RGBColor(0xE5, 0xE7, 0xEB),
        muted: RGBColor(0x9C, 0xA3, 0xAF),
        grid: RGBColor(0x27, 0x31, 0x42),
        axis: RGBColor(0x9C, 0xA3, 0xAF),
        reference: RGBColor(0x9C, 0xA3, 0xAF),
        marker: RGBColor(0xE5, 0xE7, 0xEB),
        series: Palette {
            // #0072B2 is only 3.4:1 on #111827; a lighter tint of the same blue reads better.
            blue: RGBColor(0x3A, 0x9A, 0xD9),
            vermillion: RGBColor(0xD5, 0x5E, 0x00),
            orange: RGBColor(0xE6, 0x9F, 0x00),
            bluish_green: RGBColor(0x00, 0x9E, 0x73),
            reddish_purple: RGBColor(0xCC, 0x79, 0xA7),
            sky_blue: RGBColor(0x56, 0xB4, 0xE9),
        },
    };
}

/// WCAG contrast ratio between two colours (1 to 21).
pub fn contrast_ratio(a: RGBColor, b: RGBColor) -> f64 {
    fn luminance(c: RGBColor) -> f64 {
        let lin = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.03928 { v / 12.92 } else { libm::pow((v + 0.055) / 1.055, 2.4) }
        };
        0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
    }
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WCAG asks 4.5:1 for text and 3:1 for lines and other graphics.
    #[test]
    fn colours_have_enough_contrast_on_both_backgrounds() {
        for theme in [Theme::LIGHT, Theme::DARK] {
            let bg = theme.background;
            for (name, c, min) in [
                ("text", theme.text, 4.5),
                ("muted", theme.muted, 4.5),
                ("axis", theme.axis, 3.0),
                ("reference", theme.reference, 3.0),
                ("marker", theme.marker, 4.5),
                ("blue", theme.series.blue, 3.0),
                ("vermillion", theme.series.vermillion, 3.0),
                ("orange", theme.series.orange, 3.0),
                ("bluish_green", theme.series.bluish_green, 3.0),
                ("reddish_purple", theme.series.reddish_purple, 3.0),
            ] {
                let r = contrast_ratio(c, bg);
                assert!(r >= min, "{name} {c:?} on {bg:?}: {r:.2} < {min}");
            }
            // The grid must stay quiet: visible, but well below the data.
            let grid = contrast_ratio(theme.grid, bg);
            assert!((1.1..2.0).contains(&grid), "grid contrast {grid:.2}");
        }
    }

    #[test]
    fn a_host_page_sets_background_text_muted_and_grid() {
        let chrome = Chrome::from_rgb(&[f64::from(0x10_20_30), f64::from(0xF0_E0_D0), -1.0, f64::from(0xAB_CD_EF)]);
        let t = Style::dark(1.0).with_chrome(chrome).theme();
        assert_eq!(t.background, RGBColor(0x10, 0x20, 0x30));
        assert_eq!((t.text, t.marker), (RGBColor(0xF0, 0xE0, 0xD0), RGBColor(0xF0, 0xE0, 0xD0)));
        assert_eq!(t.muted, Theme::DARK.muted, "-1 keeps the scheme's");
        assert_eq!(t.grid, RGBColor(0xAB, 0xCD, 0xEF));
        assert_eq!(t.series, Theme::DARK.series, "series colours keep their roles");
        assert_eq!(Chrome::from_rgb(&[]), Chrome::default());
        assert_eq!(Chrome::from_rgb(&[f64::from(0x0100_0000), f64::NAN]), Chrome::default(), "out of range");
        assert_eq!(Style::light(1.0).with_chrome(Chrome::default()).theme(), Theme::LIGHT);
    }

    #[test]
    fn bad_scales_fall_back_to_one() {
        for s in [0.0, -2.0, f64::NAN, f64::INFINITY] {
            assert_eq!(Style::light(s).safe_scale(), 1.0, "scale {s}");
        }
        assert_eq!(Style::dark(2.0).safe_scale(), 2.0);
    }
}

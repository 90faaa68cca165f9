//! A replica's limits, roofline style: one bar per limit (the sequence cap over the time in the
//! batch, the KV cache, prefill), the binding one filled and labelled, and the engine's measured
//! saturation as a line across them. Labels, not colour alone, say which bar binds.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axes::{Axis, Ticks};
use crate::format::format_rate;
use crate::frame::{self, DrawResult};
use crate::layout;
use crate::legend::{Item, Swatch};
use crate::style::Style;

/// One limit's bar.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bar {
    /// Its name under the bar ("sequence cap").
    pub label: String,
    /// A shorter name for narrow charts ("seq cap").
    pub short_label: String,
    /// The rate it allows, in requests per second.
    pub rps: f64,
}

/// What the limits chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LimitsData {
    /// The limits, left to right.
    pub bars: Vec<Bar>,
    /// Index of the binding limit: filled and labelled "binds".
    pub binding: Option<usize>,
    /// The engine's measured saturation throughput: a line labelled with its value.
    pub measured_rps: Option<f64>,
}

/// How far above the binding limit the axis goes: a limit far past it (a KV cache that holds
/// ten times the batch) is drawn cut at the top, with its value written on it.
const HEADROOM: f64 = 2.5;

/// Draws the limits chart on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &LimitsData, style: &Style) -> DrawResult<DB> {
    let bars: Vec<&Bar> = data.bars.iter().filter(|b| b.rps.is_finite() && b.rps > 0.0).collect();
    let binding = data.binding.and_then(|i| data.bars.get(i)).filter(|b| b.rps.is_finite() && b.rps > 0.0);
    let measured = data.measured_rps.filter(|r| r.is_finite() && *r > 0.0);
    let has_data = !bars.is_empty();
    let tallest = bars.iter().map(|b| b.rps).chain(measured).fold(0.0, f64::max);
    let reference = binding.map(|b| b.rps).into_iter().chain(measured).fold(0.0, f64::max);
    let y_hi = if reference > 0.0 { tallest.min(reference * HEADROOM) } else { tallest.max(1.0) } * 1.18;

    let narrow = frame::Frame::new(area, style).narrow;
    let names: Vec<String> = bars
        .iter()
        .map(|b| if narrow && !b.short_label.is_empty() { &b.short_label } else { &b.label }.clone())
        .collect();
    let name_at = |v: f64, _step: f64| names.get(v.floor().max(0.0) as usize).cloned().unwrap_or_default();
    let x = Axis {
        lo: 0.0,
        hi: bars.len().max(1) as f64,
        ticks: Ticks::Fixed((0..bars.len()).map(|i| i as f64 + 0.5).collect()),
        format: &name_at,
        title: String::new(),
        grid: false,
    };
    let y = Axis::rate(y_hi, narrow);
    let t = style.theme();
    let legend = [
        Item { label: "binding limit".into(), swatch: Swatch::Bar { color: t.series.vermillion, light: false } },
        Item { label: "other limits".into(), swatch: Swatch::Bar { color: t.series.blue, light: true } },
        Item {
            label: match measured {
                Some(m) => format!("engine saturates at {}", format_rate(m)),
                None => "measured saturation".into(),
            },
            swatch: Swatch::Line { color: t.text, dashed: true },
        },
    ];
    let Some(plot) = layout::build_for(area, style, x, y, &legend, has_data)? else {
        return Ok(());
    };
    let top = y_hi;
    let note = plot.note_style();
    for (i, bar) in bars.iter().enumerate() {
        let binds = binding.is_some_and(|b| std::ptr::eq(*bar, b));
        let (x0, x1) = (i as f64 + 0.18, i as f64 + 0.82);
        let h = bar.rps.min(top);
        let fill = if binds { t.series.vermillion.filled() } else { t.series.sky_blue.filled() };
        plot.bar((x0, 0.0), (x1, h), fill)?;
        if !binds {
            plot.bar((x0, 0.0), (x1, h), t.series.blue.stroke_width(plot.frame.stroke(1.5)))?;
        }
        let (cx, py) = plot.pixel((i as f64 + 0.5, h));
        let value = format_rate(bar.rps);
        let text = if binds { format!("{value}, binds") } else { value };
        // Inside the bar's top when it was cut or would crowd the axis's top; above it otherwise.
        let cut = bar.rps > top * 0.9;
        let (ty, v) = if cut { (py + plot.frame.px(4.0), VPos::Top) } else { (py - plot.frame.px(3.0), VPos::Bottom) };
        plot.area.draw(&Text::new(text, (cx, ty), note.clone().pos(Pos::new(HPos::Center, v))))?;
    }
    if let Some(m) = measured {
        let (left, _, right, _) = plot.bounds();
        let (_, py) = plot.pixel((0.0, m));
        let dash = plot.frame.px(6.0).max(2);
        let mut x = left;
        while x < right {
            let end = (x + dash).min(right);
            plot.path_px(vec![(x, py), (end, py)], t.text, 1.5)?;
            x += 2 * dash;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters_svg::SVGBackend;

    fn svg(data: &LimitsData, w: u32) -> String {
        let mut out = String::new();
        {
            let area = SVGBackend::with_string(&mut out, (w, 240)).into_drawing_area();
            draw(&area, data, &Style::light(1.0).for_svg()).unwrap();
            area.present().unwrap();
        }
        out
    }

    fn rag() -> LimitsData {
        let bar = |label: &str, short: &str, rps| Bar { label: label.into(), short_label: short.into(), rps };
        LimitsData {
            bars: vec![
                bar("sequence cap", "seq cap", 4.23),
                bar("KV cache", "KV", 7.98),
                bar("prefill", "prefill", 4.25),
            ],
            binding: Some(2),
            measured_rps: Some(4.24),
        }
    }

    #[test]
    fn names_the_binding_limit_and_the_measured_saturation() {
        let out = svg(&rag(), 640);
        assert!(out.contains("4.25 req/s, binds"), "{out}");
        assert!(out.contains("engine saturates at 4.24 req/s"), "{out}");
        assert!(out.contains("sequence cap") && out.contains("KV cache"), "{out}");
        assert!(!out.contains("4.23 req/s, binds"));
        // Narrow charts use the short names.
        assert!(svg(&rag(), 320).contains("seq cap"));
    }

    #[test]
    fn odd_input_draws_without_panicking() {
        let odd = [
            LimitsData::default(),
            LimitsData {
                bars: vec![Bar { rps: f64::NAN, ..Default::default() }],
                binding: Some(7),
                measured_rps: Some(f64::INFINITY),
            },
            LimitsData { bars: vec![Bar { rps: 1e300, ..Default::default() }], binding: Some(0), measured_rps: None },
        ];
        for data in odd {
            let _ = svg(&data, 360);
        }
        assert!(svg(&LimitsData::default(), 360).contains("no data"));
    }
}

//! The legend: a compact line (or two) of swatches and names above the plot, so it never
//! covers data.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::frame::{DrawResult, Frame, text_width};

/// A legend entry's sample mark.
#[derive(Clone, Copy)]
pub(crate) enum Swatch {
    Line { color: RGBColor, dashed: bool },
    Area(RGBColor),
    Bar { color: RGBColor, light: bool },
    Ticks(RGBColor),
}

/// One legend entry.
pub(crate) struct Item {
    pub label: String,
    pub swatch: Swatch,
}

/// Item positions (row, x offset) and the rows used, for a legend line `avail` px wide.
pub(crate) fn layout(frame: &Frame, items: &[Item], avail: i32) -> (Vec<(i32, i32)>, i32) {
    let (swatch, gap, spacing) = (frame.px(18.0), frame.px(5.0), frame.px(14.0));
    let (mut row, mut x) = (0, 0);
    let mut out = Vec::new();
    for item in items {
        let width = swatch + gap + text_width(&item.label, frame.small_font());
        if x > 0 && x + width > avail {
            row += 1;
            x = 0;
        }
        out.push((row, x));
        x += width + spacing;
    }
    let rows = if items.is_empty() { 0 } else { row + 1 };
    (out, rows)
}

pub(crate) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame,
    items: &[Item],
    layout: &[(i32, i32)],
    (x0, y0): (i32, i32),
    row_h: i32,
) -> DrawResult<DB> {
    let style = frame.text(frame.small_font(), frame.theme.text).pos(Pos::new(HPos::Left, VPos::Center));
    let (swatch, gap) = (frame.px(18.0), frame.px(5.0));
    let half = frame.px(4.0);
    for (item, &(row, dx)) in items.iter().zip(layout) {
        let (x, y) = (x0 + dx, y0 + row * row_h + row_h / 2);
        match item.swatch {
            Swatch::Line { color, dashed } => {
                let stroke = color.stroke_width(frame.stroke(2.0));
                if dashed {
                    let dash = swatch * 2 / 5;
                    for start in [x, x + swatch - dash] {
                        area.draw(&PathElement::new(vec![(start, y), (start + dash, y)], stroke))?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(x, y), (x + swatch, y)], stroke))?;
                }
            }
            Swatch::Area(color) => {
                let top = (x, y - half);
                area.draw(&Rectangle::new([top, (x + swatch, y + half)], color.mix(0.3).filled()))?;
                let edge = color.stroke_width(frame.stroke(2.0));
                area.draw(&PathElement::new(vec![top, (x + swatch, y - half)], edge))?;
            }
            Swatch::Bar { color, light } => {
                let corners = [(x, y - half), (x + swatch, y + half)];
                let fill = if light { color.mix(0.3) } else { color.to_rgba() };
                area.draw(&Rectangle::new(corners, fill.filled()))?;
                area.draw(&Rectangle::new(corners, color.stroke_width(frame.stroke(1.0))))?;
            }
            Swatch::Ticks(color) => {
                let stroke = color.stroke_width(frame.stroke(1.5));
                for i in 0..4 {
                    let tx = x + i * swatch / 3;
                    area.draw(&PathElement::new(vec![(tx, y - half), (tx, y + half)], stroke))?;
                }
            }
        }
        area.draw(&Text::new(item.label.clone(), (x + swatch + gap, y), style.clone()))?;
    }
    Ok(())
}

//! On wasm, asking a backend for a text's size makes plotters insert a `<span>` into the page
//! and read its width: a forced layout per label, dozens per redraw while a slider moves. The
//! charts measure text themselves; this backend fails the test if any chart asks it instead.

mod common;

use common::all_charts;
use kneelab_plot::Style;
use plotters::prelude::*;
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};
use std::cell::Cell;
use std::rc::Rc;

/// Counts what is drawn (into counters the test keeps) and refuses to measure text.
struct NoMeasure {
    size: (u32, u32),
    texts: Rc<Cell<usize>>,
    pixels: Rc<Cell<usize>>,
}

#[derive(Debug)]
struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "never")
    }
}

impl std::error::Error for Never {}

impl DrawingBackend for NoMeasure {
    type ErrorType = Never;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Never>> {
        Ok(())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Never>> {
        Ok(())
    }

    fn draw_pixel(&mut self, _: BackendCoord, _: BackendColor) -> Result<(), DrawingErrorKind<Never>> {
        self.pixels.set(self.pixels.get() + 1);
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        _: &str,
        _: &S,
        _: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Never>> {
        self.texts.set(self.texts.get() + 1);
        Ok(())
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        _: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Never>> {
        panic!("a chart asked the backend to measure {text:?}");
    }
}

#[test]
fn no_chart_asks_the_backend_to_measure_text() {
    for chart in all_charts() {
        for (w, h, scale) in [(360, 240, 1.0), (900, 360, 2.0)] {
            let (texts, pixels) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
            {
                let backend = NoMeasure { size: (w, h), texts: texts.clone(), pixels: pixels.clone() };
                let area = backend.into_drawing_area();
                let style = Style::light(scale);
                chart.draw(&area, &style).unwrap_or_else(|e| panic!("{}: {e:?}", chart.name()));
            }
            assert!(texts.get() >= 5, "{}: only {} texts drawn", chart.name(), texts.get());
            assert!(pixels.get() > 0, "{}: nothing drawn", chart.name());
        }
    }
}

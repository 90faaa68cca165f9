//! Every chart of the kneelab lesson, written once and generic over plotters'
//! [`DrawingBackend`](plotters::prelude::DrawingBackend).
//!
//! The web crate draws these on a `<canvas>` (plotters-canvas), the CLI and the tests on SVG.
//! Each chart is a module with a plain data struct (filled by the caller from simulation
//! results: this crate does not depend on the simulation) and one function:
//!
//! ```text
//! draw(area: &DrawingArea<DB, Shift>, data: &XData, style: &Style) -> DrawResult<DB>
//! ```
//!
//! | module | chart |
//! |---|---|
//! | [`latency`] | p50 and p99 latency (TTFT, TPOT or E2E) against offered load, log scale |
//! | [`throughput`] | throughput and goodput against offered load |
//! | [`queue`] | `num_requests_running` and `num_requests_waiting` over simulated time |
//! | [`timeline`] | the two clocks: queue wait, prefill and token drip of a few requests |
//! | [`goodput_slo`] | goodput against the TTFT SLO, beside throughput |
//! | [`limits`] | a replica's limits as bars, the binding one named, and the measured saturation |
//! | [`replica`] | one replica during one step: the queue, the seats, the token budget, the KV cache |
//! | [`fleet`] | a fleet over a day: replicas against the traffic, TTFT p99 against its SLO, the waiting queue |
//! | [`tail`] | a latency by percentile (p50 to p99.9) at two reference loads and the slider's, on fixed axes |
//!
//! The area's size is in physical pixels (CSS px x device pixel ratio); [`Style::scale`] is
//! that ratio, and fonts, strokes and markers grow with it. Layout adapts to the width: below
//! 560 CSS px a chart uses smaller fonts, fewer ticks and shorter labels. Each `draw` first
//! fills the area with the background, so it can redraw the same canvas. Legends sit on a line
//! above the plot so they never hide data.
//!
//! Input is never trusted to be tidy: empty or mismatched vectors (the shortest length wins),
//! NaN and infinities (a line breaks there), a single point and all-zero data draw without
//! panicking; with nothing to draw, the chart shows its axes and a "no data" caption.
//!
//! Charts draw only plotters' basic elements (paths, rectangles, circles, polygons, text with
//! an anchor the backend resolves itself) in pixels on the caller's area; axes, ticks and the
//! data-to-pixel mapping are this crate's own. plotters' chart builder and mesh are left out on
//! purpose: they cost the page tens of KB of wasm, and on a canvas they measure every label in
//! the page, a forced layout per label on every redraw.
//!
//! Colours follow the Okabe-Ito palette, one role per colour in every chart (see
//! [`Palette`]).
//!
//! ```
//! use kneelab_plot::{Style, latency};
//! use plotters::prelude::*;
//! use plotters_svg::SVGBackend;
//!
//! let data = latency::LatencyData {
//!     metric_label: "TTFT".into(),
//!     loads: vec![0.5, 0.9, 1.1],
//!     p50_s: vec![0.3, 1.0, 20.0],
//!     p99_s: vec![0.6, 5.0, 60.0],
//!     slo_s: Some(2.0),
//!     ..Default::default()
//! };
//! let mut svg = String::new();
//! {
//!     let area = SVGBackend::with_string(&mut svg, (360, 240)).into_drawing_area();
//!     latency::draw(&area, &data, &Style::light(1.0).for_svg()).unwrap();
//!     area.present().unwrap();
//! }
//! assert!(svg.contains("SLO 2 s"));
//! ```

#![warn(missing_docs)]

mod axes;
mod format;
mod frame;
mod geom;
mod layout;
mod legend;
mod marks;
mod style;

pub mod fleet;
pub mod goodput_slo;
pub mod latency;
pub mod limits;
pub mod queue;
pub mod replica;
pub mod tail;
pub mod throughput;
pub mod timeline;

pub use format::{
    format_mean_count, format_percent, format_rate, format_ratio, format_seconds, format_tokens_per_s, format_whole,
};
pub use frame::DrawResult;
/// The plotters this crate draws with, so callers build areas with the same version.
pub use plotters;
pub use style::{Chrome, Palette, SVG_FONT_SCALE, Style, Theme, contrast_ratio};

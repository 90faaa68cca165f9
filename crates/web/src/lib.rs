//! kneelab-web: the wasm boundary of the lesson page.
//!
//! It converts configs in (the same JSON schema as the CLI, parsed and validated by
//! kneelab-sim, so errors name the field) and results out (the CLI's JSON shapes), keeps the
//! lab's state between slider moves ([`Lab`]), and draws kneelab-plot's charts on canvases at the
//! screen's pixel density. It holds no simulation logic.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::boundary::{Fault, Kind};

mod boundary;
mod charts;
#[cfg(any(feature = "engine", test))]
mod engine;
#[cfg(feature = "fleet")]
mod fleet;
#[cfg(any(feature = "lesson", test))]
mod job;
mod lab;
#[cfg(feature = "paste")]
mod paste;
#[cfg(any(feature = "player", test))]
mod player;
mod read;
mod readouts;
#[cfg(any(feature = "lesson", test))]
mod replica;

#[cfg(feature = "engine")]
pub use engine::{SteadyRun, compare_loops, metrics_text, simulate, size, sweep};
#[cfg(feature = "fleet")]
pub use fleet::FleetLab;
#[cfg(feature = "lesson")]
pub use job::SweepJob;
pub use lab::Lab;
#[cfg(feature = "paste")]
pub use paste::Paste;
#[cfg(feature = "player")]
pub use player::ReplicaPlayer;
#[cfg(feature = "lesson")]
pub use replica::ReplicaView;

/// Runs once when the module is instantiated: route Rust panics to the browser console.
#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The crate's version, as shown on the page (for example `kneelab 0.0.0`).
#[wasm_bindgen]
pub fn version() -> String {
    format!("kneelab {}", env!("CARGO_PKG_VERSION"))
}

/// A duration in seconds as the charts write it ("850 ms", "1.2 s"): the page's text uses the
/// same formatter, so a chart's "SLO 2 s" and the sentence beside it agree.
#[wasm_bindgen(js_name = formatSeconds)]
pub fn format_seconds(s: f64) -> String {
    kneelab_plot::format_seconds(s)
}

/// A fraction as a percentage, as the charts write it ("85%", "0.5%").
#[wasm_bindgen(js_name = formatPercent)]
pub fn format_percent(fraction: f64) -> String {
    kneelab_plot::format_percent(fraction)
}

/// Requests per second, as the charts write them ("4.25 req/s").
#[wasm_bindgen(js_name = formatRate)]
pub fn format_rate(rps: f64) -> String {
    kneelab_plot::format_rate(rps)
}

/// A readout's value as the page writes it, by its name's unit
/// ([`kneelab_sim::schema::unit_of`]): the charts' formatters for durations, rates and
/// percentages, and the same rules for counts, means, ratios and token rates, so no number on
/// the page is written by a second formatter.
#[wasm_bindgen(js_name = formatMetric)]
pub fn format_metric(name: &str, value: f64) -> String {
    use kneelab_sim::schema::{Unit, unit_of};
    match unit_of(name) {
        Some(Unit::Seconds) => kneelab_plot::format_seconds(value),
        Some(Unit::Milliseconds) => kneelab_plot::format_seconds(value / 1000.0),
        Some(Unit::Rate) => kneelab_plot::format_rate(value),
        Some(Unit::Percent) => kneelab_plot::format_percent(value),
        Some(Unit::Count) => kneelab_plot::format_whole(value),
        Some(Unit::MeanCount) => kneelab_plot::format_mean_count(value),
        Some(Unit::Ratio) => kneelab_plot::format_ratio(value),
        Some(Unit::TokensPerSecond) => kneelab_plot::format_tokens_per_s(value),
        Some(Unit::Flag) | None => format!("{value}"),
    }
}

/// Traps the module on purpose, as a bug in it would: the browser suite calls it to check that
/// every lab on the page says so and recovers on its own.
#[wasm_bindgen(js_name = crashForTest)]
pub fn crash_for_test() {
    panic!("crashForTest: the module was asked to trap");
}

/// Serialises to plain JS objects (maps as objects, `None` as `null`), like the CLI's JSON.
pub(crate) fn to_js<T: Serialize>(value: &T) -> Result<JsValue, Fault> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Fault::general(Kind::Internal, format!("could not convert a result: {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_names_the_project() {
        assert_eq!(super::version(), concat!("kneelab ", env!("CARGO_PKG_VERSION")));
    }
}

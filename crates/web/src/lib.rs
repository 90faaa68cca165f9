//! kneelab-web: the wasm boundary of the lesson page.
//!
//! It converts configs in (the same JSON schema as the CLI, parsed and validated by
//! kneelab-sim, so errors name the field) and results out (the CLI's JSON shapes), keeps the
//! lab's state between slider moves ([`Lab`]), and draws kneelab-plot's charts on canvases at the
//! screen's pixel density. It holds no simulation logic.

use kneelab_sim::sweep::{self, SweepOptions};
use kneelab_sim::{Config, ConfigError};
use serde::Serialize;
use wasm_bindgen::prelude::*;

mod charts;
mod job;
mod lab;
mod readouts;

pub use job::SweepJob;
pub use lab::Lab;

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

/// Runs one config (the CLI's `kneelab run`) and returns its Summary.
#[wasm_bindgen]
pub fn simulate(config: JsValue) -> Result<JsValue, JsError> {
    let config = config_from_js(&config)?;
    config.validate().map_err(js_error)?;
    to_js(&kneelab_sim::simulate(&config).map_err(js_error)?)
}

/// Sweeps offered load (the CLI's `kneelab sweep`); `loads` defaults to 0.1, 0.15, ..., 1.2.
#[wasm_bindgen]
pub fn sweep(config: JsValue, loads: Option<Vec<f64>>) -> Result<JsValue, JsError> {
    let config = config_from_js(&config)?;
    let loads = match loads {
        Some(loads) => loads,
        None => sweep::load_grid(0.1, 1.2, 0.05).map_err(js_error)?,
    };
    to_js(&sweep::sweep(&config, &loads, SweepOptions::default()).map_err(js_error)?)
}

/// Little's Law sizing (the CLI's `kneelab size`).
#[wasm_bindgen]
pub fn size(
    max_num_seqs: f64,
    latency_s: f64,
    peak_qps: f64,
    knee_qps: Option<f64>,
    saturation_qps: Option<f64>,
) -> Result<JsValue, JsError> {
    to_js(&kneelab_sim::size(max_num_seqs, latency_s, peak_qps, knee_qps, saturation_qps).map_err(js_error)?)
}

/// Parses (without validating) a config given as a JS object, naming the field of any error
/// (`engine.max_num_seqs: invalid type: ...`) as the CLI does.
///
/// The object is read directly rather than through JSON text: serde_json would add about 35 KB
/// to the page for no gain.
pub(crate) fn config_from_js(value: &JsValue) -> Result<Config, JsError> {
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(JsError::new("config: expected an object ({ engine, cost, workload, load, slo, run })"));
    }
    serde_path_to_error::deserialize(serde_wasm_bindgen::Deserializer::from(value.clone())).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        JsError::new(&if path == "." { message } else { format!("{path}: {message}") })
    })
}

/// A core error as a JS `Error` whose message starts with the field path.
pub(crate) fn js_error(e: ConfigError) -> JsError {
    JsError::new(&e.to_string())
}

/// Serialises to plain JS objects (maps as objects, `None` as `null`), like the CLI's JSON.
pub(crate) fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("could not convert a result: {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_names_the_project() {
        assert_eq!(super::version(), concat!("kneelab ", env!("CARGO_PKG_VERSION")));
    }
}

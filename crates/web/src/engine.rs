//! The engine's own functions (the CLI's `run`, `sweep` and `size`) and what the lesson reads
//! from a lab's run below its charts (the loop comparison, the `/metrics` text): in the page's
//! third module (`kneelab_later`), which it loads only when something needs them, so its first
//! load carries the lab and its charts alone. A lab's readings are computed from what the lab
//! gives out, its config and measured capacity, so they are the lab's very numbers.

use kneelab_sim::exposition;
use kneelab_sim::sweep::{self, SweepOptions};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind, core as js_error};
use crate::to_js;

/// Runs one config (the CLI's `kneelab run`) and returns its Summary.
#[wasm_bindgen]
pub fn simulate(config: JsValue) -> Result<JsValue, Fault> {
    let config = boundary::config(&config)?;
    config.validate().map_err(boundary::core)?;
    to_js(&kneelab_sim::simulate(&config).map_err(boundary::core)?)
}

/// Sweeps offered load (the CLI's `kneelab sweep`); `loads` defaults to the lab's grid, 0.05,
/// 0.1, ..., 1.2.
#[wasm_bindgen]
pub fn sweep(config: JsValue, loads: JsValue) -> Result<JsValue, Fault> {
    let config = boundary::config(&config)?;
    let loads = if loads.is_undefined() || loads.is_null() {
        sweep::default_loads()
    } else {
        boundary::numbers(&loads, "loads", sweep::MAX_LOADS)?
    };
    to_js(&sweep::sweep(&config, &loads, SweepOptions::default()).map_err(boundary::core)?)
}

/// Little's Law sizing (the CLI's `kneelab size`): `{max_num_seqs, batch_s, peak_qps,
/// knee_qps?, saturation_qps?}`, the W being the time in the batch.
#[wasm_bindgen]
pub fn size(input: JsValue) -> Result<JsValue, Fault> {
    let get = |name: &str| js_sys::Reflect::get(&input, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
    if !input.is_object() {
        return Err(Fault::new(
            "size",
            Kind::Type,
            format!("expected an object {{max_num_seqs, batch_s, peak_qps}}, got {}", boundary::describe(&input)),
        ));
    }
    let sizing = kneelab_sim::size(&kneelab_sim::SizeInput {
        max_num_seqs: boundary::number(&get("max_num_seqs"), "max_num_seqs")?,
        batch_s: boundary::number(&get("batch_s"), "batch_s")?,
        peak_qps: boundary::number(&get("peak_qps"), "peak_qps")?,
        knee_qps: boundary::optional_number(&get("knee_qps"), "knee_qps")?,
        saturation_qps: boundary::optional_number(&get("saturation_qps"), "saturation_qps")?,
    });
    to_js(&sizing.map_err(boundary::core)?)
}

/// Both load modes at `load` (a fraction of `capacity`) for a lab of `config` (its `config()`)
/// whose measured capacity is `capacity` (its `capacity()`), and an open loop at the closed
/// loop's throughput: `kneelab_lab::LoopComparison`, or `null` at no load. The closed side's
/// users think `think_time_s`. Up to three simulations.
#[wasm_bindgen(js_name = compareLoops)]
pub fn compare_loops(
    config: JsValue,
    capacity: JsValue,
    load: JsValue,
    think_time_s: JsValue,
) -> Result<JsValue, Fault> {
    let config = boundary::config(&config)?;
    let capacity = boundary::capacity(&capacity)?;
    let load = boundary::number(&load, "load.offered_load")?;
    let think_s = boundary::number(&think_time_s, "load.think_time_s")?;
    to_js(&kneelab_lab::compare_loops(config, capacity, load, think_s).map_err(js_error)?)
}

/// The run of a lab of `config` with measured capacity `capacity` at `load`, as vLLM's
/// `/metrics` would show it (Prometheus text) with `model_name` as its label; empty at no load.
#[wasm_bindgen(js_name = metricsText)]
pub fn metrics_text(config: JsValue, capacity: JsValue, load: JsValue, model_name: JsValue) -> Result<String, Fault> {
    let outcome = point_outcome(&config, &capacity, &load)?;
    let model_name = boundary::string(&model_name, "model_name")?;
    Ok(outcome.map(|o| exposition::prometheus_text(&o, &model_name)).unwrap_or_default())
}

/// [`metrics_text`]'s scrape and how a dashboard reads it, `{ text, dashboard }`: the gauges and
/// `histogram_quantile(0.99, ...)` of TTFT, TPOT and ITL from the buckets the text lists (the
/// function `kneelab probe` reads a real scrape with). `{ text: "", dashboard: null }` at no load.
#[wasm_bindgen(js_name = metricsReading)]
pub fn metrics_reading(
    config: JsValue,
    capacity: JsValue,
    load: JsValue,
    model_name: JsValue,
) -> Result<JsValue, Fault> {
    #[derive(serde::Serialize)]
    struct Reading {
        text: String,
        dashboard: Option<exposition::Dashboard>,
    }
    let outcome = point_outcome(&config, &capacity, &load)?;
    let model_name = boundary::string(&model_name, "model_name")?;
    to_js(&match outcome {
        // One view for both: it computes the request phases' samples once.
        Some(o) => {
            let view = exposition::MetricsView::of_outcome(&o);
            Reading { text: exposition::render(&view, &model_name), dashboard: Some(view.dashboard()) }
        }
        None => Reading { text: String::new(), dashboard: None },
    })
}

/// The lab's run at `load`, read from what crossed the boundary; none at no load.
fn point_outcome(
    config: &JsValue,
    capacity: &JsValue,
    load: &JsValue,
) -> Result<Option<kneelab_sim::summary::Outcome>, Fault> {
    let config = boundary::config(config)?;
    let capacity = boundary::capacity(capacity)?;
    let load = boundary::number(load, "load.offered_load")?;
    kneelab_lab::point_outcome(config, capacity, load).map_err(js_error)
}

/// A lab's steady run: its config re-run at `load` with the engine's most requests
/// (kneelab-lab's `steady_start`), so tails near capacity hold still across seeds. In this module,
/// so a lab's first load does not carry it; `step` runs it a slice at a time.
#[wasm_bindgen]
pub struct SteadyRun {
    lab: kneelab_lab::Lab,
}

#[wasm_bindgen]
impl SteadyRun {
    /// Starts one for a lab's config (an open loop) at `load`; throws an `Error` naming the field
    /// on bad input.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue, load: JsValue) -> Result<SteadyRun, Fault> {
        let config = boundary::config(&config)?;
        let load = boundary::number(&load, "load.offered_load")?;
        let mut lab = kneelab_lab::Lab::new(config).map_err(js_error)?;
        lab.set_load(load).map_err(js_error)?;
        lab.steady_start().map_err(js_error)?;
        Ok(SteadyRun { lab })
    }

    /// Runs one slice; how far the run has come (0-1), or null once it is done.
    pub fn step(&mut self) -> Result<Option<f64>, Fault> {
        self.lab.steady_step().map_err(js_error)?;
        Ok(self.lab.steady_progress())
    }

    /// The run's readouts, keyed as a lab's (those of its point, and the capacity its load is a
    /// share of; a sweep's are null).
    pub fn readouts(&mut self) -> Result<JsValue, Fault> {
        let capacity = self.lab.point().and_then(|p| p.outcome.summary.capacity_rps);
        let mut readouts = crate::readouts::of_lab(&mut self.lab);
        readouts.insert("capacity_rps", capacity);
        to_js(&readouts)
    }
}

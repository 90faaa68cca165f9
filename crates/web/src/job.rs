//! A whole sweep run a slice at a time, so pages that compare configurations (tables, worked
//! examples) never block input for the ~0.1 s a sweep takes.

use kneelab_lab::SLICE_STEPS;
use kneelab_sim::capacity::Measurement;
use kneelab_sim::sweep::{DEFAULT_ATTAINMENT_TARGET, SweepRun};
use kneelab_sim::{Config, Scenario};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind, core as js_error};
use crate::to_js;

/// The same result as `sweep(config, loads)`, computed by repeated `step()` calls.
#[wasm_bindgen]
pub struct SweepJob {
    config: Config,
    loads: Vec<f64>,
    /// The capacity being measured, before `run` starts.
    measuring: Option<Measurement>,
    run: Option<SweepRun>,
}

#[wasm_bindgen]
impl SweepJob {
    /// Validates `config` (throws an `Error` naming the field) and the loads; runs nothing yet.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue, loads: JsValue) -> Result<SweepJob, Fault> {
        let mut config = boundary::config(&config)?;
        let loads = boundary::numbers(&loads, "loads", kneelab_sim::sweep::MAX_LOADS)?;
        // The sweep supplies the load; a config may leave the rate out.
        if config.load.rate_rps.is_none() && config.load.users.is_none() {
            config.load.offered_load.get_or_insert(1.0);
        }
        config.validate().map_err(js_error)?;
        kneelab_sim::sweep::load_check(&loads).map_err(js_error)?;
        Ok(SweepJob { config, loads, measuring: None, run: None })
    }

    /// Does one slice (a few thousand engine steps, of the capacity measurement or of a load
    /// point); returns whether more remains.
    pub fn step(&mut self) -> Result<bool, Fault> {
        if let Some(run) = &mut self.run {
            return run.advance(SLICE_STEPS).map_err(js_error);
        }
        let measuring = match &mut self.measuring {
            Some(m) => m,
            None => self.measuring.insert(Measurement::new(&Scenario::saturated(&self.config).map_err(js_error)?)),
        };
        let Some(capacity) = measuring.advance(SLICE_STEPS) else { return Ok(true) };
        self.measuring = None;
        let capacity = capacity.usable().map_err(js_error)?;
        self.run = Some(SweepRun::with_capacity(&self.config, &self.loads, capacity).map_err(js_error)?);
        Ok(!self.loads.is_empty())
    }

    /// The sweep (the CLI's `sweep` JSON); complete once `step()` has returned false.
    pub fn result(&self) -> Result<JsValue, Fault> {
        let run = self.run.as_ref().ok_or_else(|| Fault::general(Kind::State, "call step() first"))?;
        let slo = self.config.slo.slo();
        to_js(&run.assemble(slo, self.config.slo.knee, DEFAULT_ATTAINMENT_TARGET))
    }
}

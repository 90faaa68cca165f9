//! A whole sweep run a slice at a time, so pages that compare configurations (tables, worked
//! examples) never block input for the ~0.1 s a sweep takes.

use kneelab_sim::Config;
use kneelab_sim::sweep::{DEFAULT_ATTAINMENT_TARGET, SweepRun};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind, core as js_error};
use crate::to_js;

/// The same result as `sweep(config, loads)`, computed by repeated `step()` calls.
#[wasm_bindgen]
pub struct SweepJob {
    config: Config,
    loads: Vec<f64>,
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
        Ok(SweepJob { config, loads, run: None })
    }

    /// Does one slice (measuring capacity, or one load point); returns whether more remains.
    pub fn step(&mut self) -> Result<bool, Fault> {
        match &mut self.run {
            None => {
                self.run = Some(SweepRun::new(&self.config, &self.loads).map_err(js_error)?);
                Ok(!self.loads.is_empty())
            }
            Some(run) => run.step().map_err(js_error),
        }
    }

    /// The sweep (the CLI's `sweep` JSON); complete once `step()` has returned false.
    pub fn result(&self) -> Result<JsValue, Fault> {
        let run = self.run.as_ref().ok_or_else(|| Fault::general(Kind::State, "call step() first"))?;
        let slo = self.config.slo.slo();
        to_js(&run.assemble(slo, self.config.slo.knee, DEFAULT_ATTAINMENT_TARGET))
    }
}

//! The page's handle on one [`kneelab_lab::Lab`]: it converts arguments, forwards, and
//! draws. What a change keeps, the sweeps, the point and the comparisons are the core's.

use kneelab_plot::latency::YScale;
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind, core as js_error};
use crate::charts::{self, ChartData};
use crate::{readouts, to_js};

/// One knee lab: owns the current config and draws into the canvases it is given.
#[wasm_bindgen]
#[derive(Default)]
pub struct Lab {
    lab: Option<kneelab_lab::Lab>,
    /// A load set before the first config, applied when the lab is made.
    early_load: Option<f64>,
    /// Whether the latency chart uses a log axis.
    latency_log: bool,
}

#[wasm_bindgen]
impl Lab {
    /// An empty lab; give it a config with `setConfig`.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Lab {
        Lab::default()
    }

    /// Takes a config (the CLI's JSON schema). Its `load` gives the mode and, for a closed loop,
    /// the think time; the offered load comes from `setLoad`. Throws an `Error` naming the field
    /// on bad input, and then keeps the previous config.
    #[wasm_bindgen(js_name = setConfig)]
    pub fn set_config(&mut self, config: JsValue) -> Result<(), Fault> {
        let config = boundary::config(&config)?;
        if let Some(lab) = &mut self.lab {
            return lab.set_config(config).map_err(js_error);
        }
        let mut lab = kneelab_lab::Lab::new(config).map_err(js_error)?;
        if let Some(load) = self.early_load.take() {
            lab.set_load(load).map_err(js_error)?;
        }
        self.lab = Some(lab);
        Ok(())
    }

    /// Sets the offered load as a fraction of capacity (0 = no traffic).
    #[wasm_bindgen(js_name = setLoad)]
    pub fn set_load(&mut self, load: JsValue) -> Result<(), Fault> {
        let load = boundary::number(&load, "load.offered_load")?;
        match &mut self.lab {
            Some(lab) => lab.set_load(load).map_err(js_error),
            None => kneelab_lab::check_load(load).map(|()| self.early_load = Some(load)).map_err(js_error),
        }
    }

    /// Whether the current mode's sweep still has work.
    #[wasm_bindgen(js_name = sweepPending)]
    pub fn sweep_pending(&self) -> bool {
        self.lab.as_ref().is_none_or(kneelab_lab::Lab::sweep_pending)
    }

    /// Does one slice of sweep work and returns whether more remains.
    #[wasm_bindgen(js_name = sweepStep)]
    pub fn sweep_step(&mut self) -> Result<bool, Fault> {
        self.lab()?.sweep_step().map_err(js_error)
    }

    /// `{done, total}` load points of the current mode's sweep; `measured` once the capacity is.
    #[wasm_bindgen(js_name = sweepProgress)]
    pub fn sweep_progress(&mut self) -> Result<JsValue, Fault> {
        #[derive(serde::Serialize)]
        struct Progress {
            done: usize,
            total: usize,
            measured: bool,
        }
        let lab = self.lab()?;
        let ((done, total), measured) = (lab.progress(), lab.capacity().is_some());
        to_js(&Progress { done, total, measured })
    }

    /// Runs the slider's load (measuring capacity first if needed) and returns the readouts.
    #[wasm_bindgen(js_name = runPoint)]
    pub fn run_point(&mut self) -> Result<JsValue, Fault> {
        self.lab()?.run_point().map_err(js_error)?;
        self.readouts()
    }

    /// Every live number, keyed by `data-metric` name, in the Summary's units (`null` if unknown).
    pub fn readouts(&mut self) -> Result<JsValue, Fault> {
        to_js(&readouts::of_lab(self.lab()?))
    }

    /// The current mode's sweep so far (the CLI's `sweep` JSON), judged under the current SLOs.
    #[wasm_bindgen(js_name = sweepResult)]
    pub fn sweep_result(&mut self) -> Result<JsValue, Fault> {
        to_js(&self.lab()?.sweep())
    }

    /// The replica's measured capacity (`{rps, base_latency_s, completions_counted, window_s}`),
    /// or null until it is measured: what the replica player, the loop comparison and the
    /// `/metrics` text (the third module's) take to run the lab's point.
    pub fn capacity(&mut self) -> Result<JsValue, Fault> {
        to_js(&self.lab()?.capacity())
    }

    /// Draws the latency chart on a log axis (`true`) or a linear one from 0 (`false`).
    #[wasm_bindgen(js_name = setLatencyLog)]
    pub fn set_latency_log(&mut self, log: JsValue) -> Result<(), Fault> {
        self.latency_log = log.as_bool().ok_or_else(|| {
            Fault::new("log", Kind::Type, format!("expected true or false, got {}", boundary::describe(&log)))
        })?;
        Ok(())
    }

    /// Draws the chart named `chart` (one of the schema's `panels`) on `canvas`, in the page's
    /// `chrome` colours if given; returns false if the canvas is not laid out.
    pub fn draw(&mut self, chart: JsValue, canvas: JsValue, dark: JsValue, chrome: JsValue) -> Result<bool, Fault> {
        let chart = boundary::string(&chart, "chart")?;
        let (canvas, dark, chrome) = boundary::draw_target(&canvas, &dark, &chrome)?;
        let scale = if self.latency_log { YScale::Log } else { YScale::Linear };
        let data = ChartData::of(self.lab()?, &chart, scale)
            .ok_or_else(|| Fault::new("chart", Kind::Invalid, format!("no chart named {chart:?}")))?;
        charts::draw_on(&canvas, dark, chrome, |area, style| data.draw(area, style))
    }
}

impl Lab {
    fn lab(&mut self) -> Result<&mut kneelab_lab::Lab, Fault> {
        self.lab.as_mut().ok_or_else(|| Fault::general(Kind::State, "setConfig first"))
    }
}

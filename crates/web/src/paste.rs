//! "Paste your scrapes": two `/metrics` texts of a real replica, taken some seconds apart, read
//! by kneelab-probe as `kneelab probe` reads them, and placed on a simulated sweep of the
//! reader's preset and workload (swept here a slice at a time, like `SweepJob`).

use kneelab_probe::{OnKnee, Report, Sample, analyse, models, on_knee, parse};
use kneelab_sim::sweep::{DEFAULT_ATTAINMENT_TARGET, SweepRun};
use kneelab_sim::{Config, Options, Simulation, Sweep, exposition};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind, core as js_error};
use crate::charts::{self, Marker};
use crate::to_js;

/// The longest gap between two pasted scrapes the page accepts: a day.
const MAX_SECONDS: f64 = 86_400.0;

/// A pasted window, and the sweep it is placed on.
#[wasm_bindgen]
#[derive(Default)]
pub struct Paste {
    config: Option<Config>,
    run: Option<SweepRun>,
    sweep: Option<Sweep>,
    report: Option<Report>,
    peak_qps: Option<f64>,
}

/// What the page shows: the window's report and, once the sweep is done, its place on the knee.
#[derive(Serialize)]
struct Reading<'a> {
    /// Every `model_name` in the scrapes.
    models: Vec<String>,
    report: &'a Report,
    knee: Option<OnKnee>,
    /// Whether the sweep is still running.
    sweeping: bool,
}

#[wasm_bindgen]
impl Paste {
    /// Nothing pasted, nothing swept.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Paste {
        Paste::default()
    }

    /// Reads `first` and `second`, taken `seconds` apart, for `model` (the first model if empty).
    /// Throws an `Error` whose `path` is `first`, `second`, `seconds` or `model`; the last good
    /// reading is kept.
    pub fn read(&mut self, first: JsValue, second: JsValue, seconds: JsValue, model: JsValue) -> Result<(), Fault> {
        let seconds = boundary::number(&seconds, "seconds")?;
        if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
            return Err(Fault::new(
                "seconds",
                Kind::Invalid,
                format!("the time between the two scrapes must be above 0 and at most {MAX_SECONDS} s, got {seconds}"),
            ));
        }
        let scrape = |value: &JsValue, path: &str| {
            let text = boundary::string(value, path)?;
            if text.trim().is_empty() {
                return Err(Fault::new(path, Kind::Invalid, "is empty: paste the text of a /metrics page"));
            }
            parse(&text).map_err(|e| Fault::new(path, Kind::Invalid, e.message))
        };
        let samples = [
            Sample { t_s: 0.0, scrape: scrape(&first, "first")? },
            Sample { t_s: seconds, scrape: scrape(&second, "second")? },
        ];
        let model = boundary::string(&model, "model")?;
        let names = models(&samples);
        let model = if model.is_empty() { names.iter().next().cloned().unwrap_or_default() } else { model };
        if !samples.iter().all(|s| s.scrape.models.contains_key(&model)) {
            let which = if samples[0].scrape.models.contains_key(&model) { "second" } else { "first" };
            return Err(Fault::new(
                which,
                Kind::Invalid,
                format!("has no metrics for model_name {model:?}; it has {names:?}"),
            ));
        }
        let report = analyse(&samples, &model);
        if report.request_rate_rps.is_none() {
            return Err(Fault::new(
                "second",
                Kind::Invalid,
                "no request rate: neither scrape has vllm:request_success_total or vllm:e2e_request_latency_seconds",
            ));
        }
        self.report = Some(report);
        Ok(())
    }

    /// The replica to place the reading on (a config of the lab's schema); a new one starts a
    /// sweep, which `step` advances. Throws an `Error` naming the field.
    #[wasm_bindgen(js_name = setConfig)]
    pub fn set_config(&mut self, config: JsValue, peak_qps: JsValue) -> Result<(), Fault> {
        let mut config = boundary::config(&config)?;
        config.load.offered_load.get_or_insert(1.0);
        config.validate().map_err(js_error)?;
        let peak_qps = boundary::optional_number(&peak_qps, "peak_qps")?;
        if let Some(peak) = peak_qps {
            kneelab_probe::check_peak(peak).map_err(js_error)?;
        }
        self.peak_qps = peak_qps;
        if self.config.as_ref() != Some(&config) {
            self.config = Some(config);
            self.run = None;
            self.sweep = None;
        }
        Ok(())
    }

    /// Does one slice of the sweep; returns whether more remains.
    pub fn step(&mut self) -> Result<bool, Fault> {
        let Some(config) = &self.config else { return Ok(false) };
        if self.sweep.is_some() {
            return Ok(false);
        }
        let Some(run) = &mut self.run else {
            self.run = Some(SweepRun::new(config, &kneelab_sim::schema::loads()).map_err(js_error)?);
            return Ok(true);
        };
        if run.step().map_err(js_error)? {
            return Ok(true);
        }
        self.sweep = Some(run.assemble(config.slo.slo(), config.slo.knee, DEFAULT_ATTAINMENT_TARGET));
        self.run = None;
        Ok(false)
    }

    /// The reading (`null` before one): the window's report and its place on the knee.
    pub fn result(&self) -> Result<JsValue, Fault> {
        let Some(report) = &self.report else { return Ok(JsValue::NULL) };
        let max_num_seqs = self.config.as_ref().map_or(0, |c| c.engine.max_num_seqs);
        let knee = self.sweep.as_ref().and_then(|s| on_knee(report, s, max_num_seqs, self.peak_qps));
        to_js(&Reading { models: vec![report.model.clone()], report, knee, sweeping: self.sweep.is_none() })
    }

    /// Draws the sweep's throughput curve with the reading as a labelled dot; false if the
    /// canvas is not laid out.
    pub fn draw(&self, canvas: JsValue, dark: JsValue, chrome: JsValue) -> Result<bool, Fault> {
        let (canvas, dark, chrome) = boundary::draw_target(&canvas, &dark, &chrome)?;
        let sweep = self.sweep.as_ref();
        let max_num_seqs = self.config.as_ref().map_or(0, |c| c.engine.max_num_seqs);
        let placed = self.report.as_ref().zip(sweep).and_then(|(r, s)| on_knee(r, s, max_num_seqs, None));
        let mut data = charts::throughput_data(sweep, Marker::default());
        if let Some(on) = placed {
            // Past the sweep's saturation there is no load to read off: the dot sits at the
            // sweep's last point, at the measured rate.
            let load = on.placement.offered_load.or_else(|| data.loads.last().copied());
            data.current_load = load;
            data.current_throughput_rps = Some(on.rate_per_engine_rps);
            data.current_label = Some(format!("you: {}", kneelab_plot::format_rate(on.rate_per_engine_rps)));
        }
        charts::draw_on(&canvas, dark, chrome, |area, style| kneelab_plot::throughput::draw(area, &data, style))
    }
}

/// Two `/metrics` texts of the simulated replica of `config`, `seconds` apart after `warmup_s`
/// of simulated time: an example to paste, whose knee is known.
#[wasm_bindgen(js_name = exampleScrapes)]
pub fn example_scrapes(config: JsValue, warmup_s: JsValue, seconds: JsValue) -> Result<JsValue, Fault> {
    let config = boundary::config(&config)?;
    config.validate().map_err(js_error)?;
    let warmup_s = boundary::number(&warmup_s, "warmup_s")?;
    let seconds = boundary::number(&seconds, "seconds")?;
    for (path, v) in [("warmup_s", warmup_s), ("seconds", seconds)] {
        if !(0.0..=MAX_SECONDS).contains(&v) {
            return Err(Fault::new(path, Kind::Invalid, format!("must be from 0 to {MAX_SECONDS} s, got {v}")));
        }
    }
    let scenario = kneelab_sim::prepare_scenario(&config).map_err(js_error)?;
    let mut sim = Simulation::new(&scenario, Options::default());
    let model = kneelab_sim::schema::MODEL;
    sim.advance_to(warmup_s);
    let first = exposition::live_text(&sim, model);
    sim.advance_to(warmup_s + seconds);
    let second = exposition::live_text(&sim, model);
    to_js(&[first, second])
}

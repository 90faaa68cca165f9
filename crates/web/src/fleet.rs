//! The fleet lab (the `fleet` feature, built with the replica player into the page's third
//! module, `kneelab_later`): a kneelab-sim `Fleet` run a slice at a time, so the page answers
//! input while a day plays, and its charts drawn by kneelab-plot's `fleet` module. A shell that
//! holds the core's fleet and forwards; the settings the page offers come from
//! `kneelab_sim::fleet_schema`.

use kneelab_plot::fleet::{FleetChart, FleetData};
use kneelab_sim::fleet::{Fleet, FleetConfig};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind, core as js_error};
use crate::charts;
use crate::to_js;

const FLEET_SHAPE: &str = "an object ({ workload, slo, traffic, router, autoscaler, run })";

/// The longest slice of wall time `step` may be asked for, in milliseconds.
const MAX_BUDGET_MS: f64 = 1_000.0;

/// One fleet run, advanced by `step()`.
#[wasm_bindgen]
pub struct FleetLab {
    fleet: Fleet,
    config: FleetConfig,
    /// Simulated time reached.
    t_s: f64,
    done: bool,
}

#[wasm_bindgen]
impl FleetLab {
    /// A fleet at time 0 from a config of the CLI's `kneelab fleet` schema. Throws an `Error`
    /// whose `path` names the field at fault (`autoscaler.min_replicas`, ...).
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<FleetLab, Fault> {
        let config: FleetConfig = boundary::parse(&config, "config", FLEET_SHAPE)?;
        let fleet = Fleet::new(&config).map_err(js_error)?;
        Ok(FleetLab { fleet, config, t_s: 0.0, done: false })
    }

    /// Runs the fleet scrape by scrape for about `budget_ms` of wall time (at least one
    /// scrape); returns whether more remains.
    pub fn step(&mut self, budget_ms: JsValue) -> Result<bool, Fault> {
        let budget = boundary::number(&budget_ms, "budget_ms")?;
        if !(budget > 0.0 && budget <= MAX_BUDGET_MS) {
            return Err(Fault::new(
                "budget_ms",
                Kind::Invalid,
                format!("must be above 0 and at most {MAX_BUDGET_MS}, got {budget}"),
            ));
        }
        let started = js_sys::Date::now();
        while !self.done {
            self.t_s += self.config.run.sample_s;
            self.done = self.fleet.advance(self.t_s).map_err(js_error)?;
            if js_sys::Date::now() - started >= budget {
                break;
            }
        }
        Ok(!self.done)
    }

    /// The share of the run's simulated time played, from 0 to 1.
    pub fn progress(&self) -> f64 {
        if self.done { 1.0 } else { (self.t_s / self.config.run.duration_s).clamp(0.0, 1.0) }
    }

    /// Whether the run is over.
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> bool {
        self.done
    }

    /// The totals so far (the CLI's `totals`: attainment, goodput, GPU-hours, cost per 1,000
    /// good requests, ...).
    pub fn totals(&self) -> Result<JsValue, Fault> {
        to_js(&self.fleet.result().totals)
    }

    /// Totals and series so far (the CLI's `kneelab fleet --format json`).
    pub fn result(&self) -> Result<JsValue, Fault> {
        to_js(&self.fleet.result())
    }

    /// Draws `chart` (`replicas`, `ttft` or `waiting`) on `canvas` for the run so far; false if
    /// the canvas is not laid out.
    pub fn draw(&self, chart: JsValue, canvas: JsValue, dark: JsValue, chrome: JsValue) -> Result<bool, Fault> {
        let name = boundary::string(&chart, "chart")?;
        let chart = match name.as_str() {
            "replicas" => FleetChart::Replicas,
            "ttft" => FleetChart::Ttft,
            "waiting" => FleetChart::Waiting,
            _ => {
                return Err(Fault::new(
                    "chart",
                    Kind::Invalid,
                    format!("expected replicas, ttft or waiting, got {name:?}"),
                ));
            }
        };
        let (canvas, dark, chrome) = boundary::draw_target(&canvas, &dark, &chrome)?;
        let data = self.chart_data();
        charts::draw_on(&canvas, dark, chrome, |area, style| kneelab_plot::fleet::draw(area, &data, chart, style))
    }
}

impl FleetLab {
    fn chart_data(&self) -> FleetData {
        let series = self.fleet.series();
        let column = |f: fn(&kneelab_sim::fleet::FleetPoint) -> f64| series.iter().map(f).collect::<Vec<f64>>();
        FleetData {
            t_s: column(|p| p.t_s),
            duration_s: Some(self.config.run.duration_s),
            offered_rps: column(|p| p.offered_rps),
            ready: column(|p| f64::from(p.ready)),
            starting: column(|p| f64::from(p.starting)),
            replica_capacity_rps: Some(self.fleet.replica_capacity_rps()),
            ttft_p99_s: column(|p| p.ttft_p99_s),
            slo_ttft_s: Some(self.fleet.slo().ttft_s),
            waiting: column(|p| f64::from(p.waiting)),
        }
    }
}

/// The fleet lab's settings (`kneelab_sim::fleet_schema`): the day a lab starts from, the routers
/// and signals with their labels and thresholds, and the ranges of its controls.
#[wasm_bindgen(js_name = fleetSchema)]
pub fn fleet_schema() -> Result<JsValue, Fault> {
    to_js(&kneelab_sim::fleet_schema::fleet_schema())
}

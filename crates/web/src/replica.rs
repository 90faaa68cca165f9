//! One replica during one engine step, for the page's picture of the engine (`ReplicaView`).

use kneelab_lab::SLICE_STEPS;
use kneelab_sim::capacity::Measurement;
use kneelab_sim::{Config, Options, Scenario, Simulation, Snapshot};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind};
use crate::charts;
use crate::to_js;

/// One step of a replica from the middle of a run at the config's load: the first step there
/// that carries a prefill chunk while requests wait (or, if none does, the first with a prefill
/// chunk), kept so the page can redraw it (resize, dark mode) for free. It is found a slice of a
/// few thousand engine steps at a time (`step()`), the capacity first when the load is a fraction
/// of it, so no call blocks a page for long, whatever the config.
#[wasm_bindgen]
pub struct ReplicaView {
    config: Config,
    /// The capacity being measured, when the load is a fraction of it.
    measuring: Option<Measurement>,
    /// The config resolved at its load, once it can be.
    scenario: Option<Scenario>,
    /// The run to the step it keeps, and the requests that step must have waiting (1, then 0).
    running: Option<(Box<Simulation>, u32)>,
    snapshot: Option<Snapshot>,
}

#[wasm_bindgen]
impl ReplicaView {
    /// Checks `config` (the CLI's JSON schema; throws an `Error` naming the field); runs
    /// nothing yet.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<ReplicaView, Fault> {
        let config = boundary::config(&config)?;
        let mut view = ReplicaView { config, measuring: None, scenario: None, running: None, snapshot: None };
        if view.config.load.offered_load.is_some() {
            view.measuring = Some(Measurement::new(&Scenario::saturated(&view.config).map_err(boundary::core)?));
        } else {
            view.start(Scenario::new(&view.config).map_err(boundary::core)?);
        }
        Ok(view)
    }

    /// Does one slice (a few thousand engine steps of the capacity measurement, or of the run to
    /// the step it keeps); returns whether more remains. Throws an `Error` naming the field if
    /// the config cannot run.
    pub fn step(&mut self) -> Result<bool, Fault> {
        if let Some(m) = &mut self.measuring {
            if let Some(capacity) = m.advance(SLICE_STEPS) {
                self.measuring = None;
                self.start(Scenario::resolve(&self.config, &capacity).map_err(boundary::core)?);
            }
            return Ok(true);
        }
        let Some((sim, _)) = &mut self.running else { return Ok(false) };
        // Only as far as the step it keeps: the rest of the run would change nothing here.
        if (0..SLICE_STEPS).all(|_| !sim.recorder().has_snapshot() && sim.step()) {
            return Ok(true);
        }
        let (sim, min_waiting) = self.running.take().expect("the run just stepped");
        match (sim.finish().map_err(boundary::core)?.snapshot, &self.scenario) {
            (Some(snapshot), _) => self.snapshot = Some(snapshot),
            // No step with requests waiting: the first with a prefill chunk, from the start again.
            (None, Some(scenario)) if min_waiting > 0 => self.running = Some(run_to_middle(scenario, 0)),
            _ => {
                return Err(Fault::general(
                    Kind::Internal,
                    "no step carried a prefill chunk after the middle of the run",
                ));
            }
        }
        Ok(self.running.is_some())
    }

    /// The step as data: `{t_s, max_num_seqs, max_num_batched_tokens, kv_blocks,
    /// kv_blocks_used, seats: [{id, prompt, output, emitted, step_tokens, prefill}], waiting,
    /// waiting_s, decode_tokens, prefill_tokens}`.
    pub fn snapshot(&self) -> Result<JsValue, Fault> {
        to_js(self.kept()?)
    }

    /// Draws it on `canvas` (dark colours if `dark`, the page's `chrome` over them if given).
    pub fn draw(&self, canvas: JsValue, dark: JsValue, chrome: JsValue) -> Result<bool, Fault> {
        let (canvas, dark, chrome) = boundary::draw_target(&canvas, &dark, &chrome)?;
        let data = charts::replica_data(self.kept()?);
        charts::draw_on(&canvas, dark, chrome, |area, style| kneelab_plot::replica::draw(area, &data, style))
    }
}

impl ReplicaView {
    fn kept(&self) -> Result<&Snapshot, Fault> {
        self.snapshot.as_ref().ok_or_else(|| Fault::general(Kind::State, "call step() until it returns false"))
    }

    /// Starts the run to the step it keeps, on `scenario`.
    fn start(&mut self, scenario: Scenario) {
        self.running = Some(run_to_middle(&scenario, 1));
        self.scenario = Some(scenario);
    }
}

/// `scenario`'s run, keeping the first step after the middle of its measured requests that
/// carries a prefill chunk with at least `min_waiting` requests waiting.
fn run_to_middle(scenario: &Scenario, min_waiting: u32) -> (Box<Simulation>, u32) {
    let middle = scenario.warmup + scenario.requests.saturating_sub(scenario.warmup) / 2;
    let options = Options { snapshot_after: Some(middle), snapshot_min_waiting: min_waiting, ..Options::default() };
    (Box::new(Simulation::new(scenario, options)), min_waiting)
}

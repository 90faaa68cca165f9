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
/// chunk), kept so the page can redraw it (resize, dark mode) for free. It is found a slice at a
/// time (`step()`): an offered load needs the capacity measured first, tens of milliseconds.
#[wasm_bindgen]
pub struct ReplicaView {
    config: Config,
    /// The capacity being measured, when the load is a fraction of it.
    measuring: Option<Measurement>,
    snapshot: Option<Snapshot>,
}

#[wasm_bindgen]
impl ReplicaView {
    /// Checks `config` (the CLI's JSON schema; throws an `Error` naming the field); runs
    /// nothing yet.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<ReplicaView, Fault> {
        let config = boundary::config(&config)?;
        let measuring = match config.load.offered_load {
            Some(_) => Some(Measurement::new(&Scenario::saturated(&config).map_err(boundary::core)?)),
            None => {
                config.validate().map_err(boundary::core)?;
                None
            }
        };
        Ok(ReplicaView { config, measuring, snapshot: None })
    }

    /// Does one slice (a few thousand engine steps of the capacity measurement, or the run to
    /// the step it keeps); returns whether more remains. Throws an `Error` naming the field if
    /// the config cannot run.
    pub fn step(&mut self) -> Result<bool, Fault> {
        if self.snapshot.is_some() {
            return Ok(false);
        }
        let scenario = match &mut self.measuring {
            Some(m) => match m.advance(SLICE_STEPS) {
                Some(capacity) => Scenario::resolve(&self.config, &capacity),
                None => return Ok(true),
            },
            None => Scenario::new(&self.config),
        };
        self.measuring = None;
        self.snapshot = Some(middle_step(&scenario.map_err(boundary::core)?)?);
        Ok(false)
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
}

/// The step a `ReplicaView` keeps from `scenario`'s run.
fn middle_step(scenario: &Scenario) -> Result<Snapshot, Fault> {
    let middle = scenario.warmup + scenario.requests.saturating_sub(scenario.warmup) / 2;
    for min_waiting in [1, 0] {
        let options = Options { snapshot_after: Some(middle), snapshot_min_waiting: min_waiting, ..Options::default() };
        // Only as far as the step it keeps: the rest of the run would change nothing here.
        let mut sim = Simulation::new(scenario, options);
        while !sim.recorder().has_snapshot() && sim.step() {}
        if let Some(snapshot) = sim.finish().map_err(boundary::core)?.snapshot {
            return Ok(snapshot);
        }
    }
    Err(Fault::general(Kind::Internal, "no step carried a prefill chunk after the middle of the run"))
}

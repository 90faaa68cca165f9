//! The replica player's data: a replica's run traced iteration by iteration (`ReplicaPlayer`).
//! Built with kneelab-web's `player` feature only, until the page's player uses it: unused, it
//! would add about 8 KB gzipped to every page.

use kneelab_sim::{Options, Scenario, Simulation, Snapshot, StepWindow};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind};
use crate::charts;
use crate::to_js;

/// A replica's run traced iteration by iteration from its start, for the player (the `replica`
/// panel): the first iterations of the very run a lab's readouts come from (same config and
/// seed; tracing changes nothing in a run).
#[wasm_bindgen]
pub struct ReplicaPlayer {
    steps: Vec<Snapshot>,
    ttft_slo_s: f64,
}

impl ReplicaPlayer {
    /// Traces the first `schema`'s player steps of `scenario`'s run (and stops there).
    pub(crate) fn of(scenario: &Scenario) -> Result<ReplicaPlayer, Fault> {
        let steps = kneelab_sim::schema::REPLICA_STEPS;
        let window = StepWindow { after_arrivals: 0, steps };
        let mut sim = Simulation::new(scenario, Options { step_trace: Some(window), ..Options::default() });
        while sim.recorder().step_trace.len() < steps as usize && sim.step() {}
        let outcome = sim.finish().map_err(boundary::core)?;
        Ok(ReplicaPlayer { steps: outcome.step_trace, ttft_slo_s: scenario.slo.ttft_s })
    }

    fn at(&self, index: &JsValue) -> Result<&Snapshot, Fault> {
        let i = boundary::number(index, "step")?;
        let n = self.steps.len();
        if i.fract() != 0.0 || i < 0.0 || i >= n as f64 {
            return Err(Fault::new(
                "step",
                Kind::Invalid,
                format!("must be a whole number from 0 to {}, got {i}", n.max(1) - 1),
            ));
        }
        Ok(&self.steps[i as usize])
    }
}

#[wasm_bindgen]
impl ReplicaPlayer {
    /// Runs `config` (the CLI's JSON schema) and traces its first iterations. Throws an `Error`
    /// naming the field on bad input.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<ReplicaPlayer, Fault> {
        let config = boundary::config(&config)?;
        ReplicaPlayer::of(&Scenario::new(&config).map_err(boundary::core)?)
    }

    /// Iterations traced.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> u32 {
        self.steps.len() as u32
    }

    /// The TTFT SLO the clocks turn at, in seconds.
    #[wasm_bindgen(getter, js_name = ttftSloS)]
    pub fn ttft_slo_s(&self) -> f64 {
        self.ttft_slo_s
    }

    /// Each iteration's start, in simulated seconds (for the player's clock).
    #[wasm_bindgen(js_name = startTimes)]
    pub fn start_times(&self) -> Vec<f64> {
        self.steps.iter().map(|s| s.t_s).collect()
    }

    /// Iteration `index` as data: the `ReplicaView` snapshot's fields plus `index`, `duration_s`,
    /// `admitted`, `preempted`, `completed` (arrival indexes) and `arrived` (`[index, time]`).
    pub fn step(&self, index: JsValue) -> Result<JsValue, Fault> {
        to_js(self.at(&index)?)
    }

    /// Draws iteration `index`, `phase` (0-1) of the way through, on `canvas`.
    pub fn draw(
        &self,
        canvas: JsValue,
        dark: JsValue,
        chrome: JsValue,
        index: JsValue,
        phase: JsValue,
    ) -> Result<bool, Fault> {
        let step = self.at(&index)?;
        let phase = boundary::number(&phase, "phase")?;
        let (canvas, dark, chrome) = boundary::draw_target(&canvas, &dark, &chrome)?;
        let data = charts::replica_step_data(step, self.ttft_slo_s, phase);
        charts::draw_on(&canvas, dark, chrome, |area, style| kneelab_plot::replica::draw(area, &data, style))
    }
}

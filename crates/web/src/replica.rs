//! One replica during one engine step, for the page's picture of the engine (`ReplicaView`).

use kneelab_sim::{Options, Simulation, Snapshot};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind};
use crate::charts;
use crate::to_js;

/// One step of a replica from the middle of a run at the config's load: the first step there
/// that carries a prefill chunk while requests wait (or, if none does, the first with a prefill
/// chunk), kept so the page can redraw it (resize, dark mode) for free.
#[wasm_bindgen]
pub struct ReplicaView {
    snapshot: Snapshot,
}

#[wasm_bindgen]
impl ReplicaView {
    /// Runs `config` (the CLI's JSON schema) and keeps one step from the middle of its measured
    /// requests. Throws an `Error` naming the field on bad input.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<ReplicaView, Fault> {
        let config = boundary::config(&config)?;
        let scenario = kneelab_sim::prepare_scenario(&config).map_err(boundary::core)?;
        let middle = scenario.warmup + scenario.requests.saturating_sub(scenario.warmup) / 2;
        let mut snapshot = None;
        for min_waiting in [1, 0] {
            let options =
                Options { snapshot_after: Some(middle), snapshot_min_waiting: min_waiting, ..Options::default() };
            snapshot = Simulation::new(&scenario, options).run().map_err(boundary::core)?.snapshot;
            if snapshot.is_some() {
                break;
            }
        }
        let snapshot = snapshot.ok_or_else(|| {
            Fault::general(Kind::Internal, "no step carried a prefill chunk after the middle of the run")
        })?;
        Ok(ReplicaView { snapshot })
    }

    /// The step as data: `{t_s, max_num_seqs, max_num_batched_tokens, kv_blocks,
    /// kv_blocks_used, seats: [{id, prompt, output, emitted, step_tokens, prefill}], waiting,
    /// waiting_s, decode_tokens, prefill_tokens}`.
    pub fn snapshot(&self) -> Result<JsValue, Fault> {
        to_js(&self.snapshot)
    }

    /// Draws it on `canvas` (dark colours if `dark`, the page's `chrome` over them if given).
    pub fn draw(&self, canvas: JsValue, dark: JsValue, chrome: JsValue) -> Result<bool, Fault> {
        let (canvas, dark, chrome) = boundary::draw_target(&canvas, &dark, &chrome)?;
        let data = charts::replica_data(&self.snapshot);
        charts::draw_on(&canvas, dark, chrome, |area, style| kneelab_plot::replica::draw(area, &data, style))
    }
}

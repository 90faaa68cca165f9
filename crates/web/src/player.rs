//! The replica player's data (`ReplicaPlayer`), for the `replica` panel
//! (www/js/replica-player.js plays it): a lab's run at the slider's load, its queue over the
//! whole run, and a window of it traced iteration by iteration, moved along the run on request.

use kneelab_sim::schema::{REPLICA_HISTORY_BINS, REPLICA_STEPS};
use kneelab_sim::{Options, Scenario, Simulation, Snapshot, StepWindow};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind};
use crate::charts;
use crate::to_js;

/// Start times of the steps that preempted, kept at most (a run that preempts more is marked by
/// its first ones).
const MAX_PREEMPTIONS_KEPT: usize = 10_000;

/// `num_requests_waiting` over a whole run, as the player's caption tells it.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
struct QueueShape {
    /// The most requests that waited (as the strip's peak).
    peak: u32,
    /// When the queue first reached its peak.
    peak_s: f64,
    /// Requests waiting at the step in which the run's last request arrived.
    last: u32,
    /// Steps, up to the last arrival, after which no request waited.
    empty_steps: u64,
    /// Steps up to the last arrival.
    steps: u64,
    /// Whether the queue emptied at some step after its peak.
    emptied_after_peak: bool,
}

/// The very run a lab's readouts come from (same config and seed; tracing changes nothing in a
/// run), for the player: where it preempted, its longest step, `num_requests_waiting` over all
/// of it, and one window of its iterations traced step by step.
#[wasm_bindgen]
pub struct ReplicaPlayer {
    scenario: Scenario,
    /// The traced window: consecutive iterations.
    steps: Vec<Snapshot>,
    /// The most requests waiting in each of [`REPLICA_HISTORY_BINS`] equal stretches of the run.
    history: Vec<u32>,
    queue: QueueShape,
    end_s: f64,
    total_steps: u64,
    preemptions_s: Vec<f64>,
    longest_s: f64,
    ttft_slo_s: f64,
}

impl ReplicaPlayer {
    /// Runs `scenario` once whole (its queue, preemptions and longest step), then traces its
    /// first window.
    pub(crate) fn of(scenario: &Scenario) -> Result<ReplicaPlayer, Fault> {
        let mut sim = Simulation::new(scenario, Options::default());
        let mut samples: Vec<(f64, u32)> = Vec::new();
        let (mut preemptions_s, mut longest) = (Vec::new(), (0.0, f64::NEG_INFINITY));
        let (mut steps, mut preempted) = (0, 0);
        let mut last_arrival_s = f64::INFINITY;
        loop {
            let more = sim.step();
            if last_arrival_s.is_infinite() && sim.arrived() >= scenario.requests {
                last_arrival_s = sim.now_s();
            }
            let start = sim.last_start_s();
            if sim.steps() == steps + 1 && sim.now_s() - start > longest.1 {
                longest = (start, sim.now_s() - start); // a single iteration, not a decode jump
            }
            if sim.preempted_total() > preempted && preemptions_s.len() < MAX_PREEMPTIONS_KEPT {
                preemptions_s.push(start);
            }
            (steps, preempted) = (sim.steps(), sim.preempted_total());
            samples.push((start, sim.num_requests_waiting() as u32));
            if !more {
                break;
            }
        }
        let end_s = sim.now_s();
        sim.finish().map_err(boundary::core)?;
        // The run ends by draining what arrived before its last request, which says nothing of
        // the load: the queue's shape is read up to the last arrival.
        let arriving = samples.iter().take_while(|&&(t, _)| t < last_arrival_s).count().max(1).min(samples.len());
        let mut queue = QueueShape { steps: arriving as u64, ..QueueShape::default() };
        for (i, &(t, waiting)) in samples.iter().enumerate() {
            if waiting > queue.peak {
                (queue.peak, queue.peak_s, queue.emptied_after_peak) = (waiting, t, false);
            }
            if waiting == 0 && i < arriving {
                queue.empty_steps += 1;
                queue.emptied_after_peak |= queue.peak > 0;
            }
        }
        queue.last = samples.get(arriving - 1).map_or(0, |&(_, w)| w);
        let mut history = vec![0; REPLICA_HISTORY_BINS];
        for (t, waiting) in samples {
            let bin = bin_of(t, end_s);
            history[bin] = history[bin].max(waiting);
        }
        let mut player = ReplicaPlayer {
            scenario: scenario.clone(),
            steps: Vec::new(),
            history,
            queue,
            end_s,
            total_steps: steps,
            preemptions_s,
            longest_s: longest.0,
            ttft_slo_s: scenario.slo.ttft_s,
        };
        player.trace(0.0)?;
        Ok(player)
    }

    /// Traces the window of iterations starting at or after `from_s`: one more than it keeps,
    /// since a window's last step may be a decode jump cut short before its completions.
    fn trace(&mut self, from_s: f64) -> Result<(), Fault> {
        // The old window goes first: two alive at once would double the memory a trace needs.
        self.steps = Vec::new();
        let traced = REPLICA_STEPS as usize + 1;
        let window = StepWindow { after_arrivals: 0, after_s: from_s, steps: traced as u32 };
        let mut sim = Simulation::new(&self.scenario, Options { step_trace: Some(window), ..Options::default() });
        while sim.recorder().traced_steps() < traced && sim.step() {}
        self.steps = sim.finish().map_err(boundary::core)?.step_trace;
        self.steps.truncate(REPLICA_STEPS as usize);
        Ok(())
    }

    fn at(&self, index: &JsValue) -> Result<(usize, &Snapshot), Fault> {
        let i = boundary::number(index, "step")?;
        let n = self.steps.len();
        if i.fract() != 0.0 || i < 0.0 || i >= n as f64 {
            return Err(Fault::new(
                "step",
                Kind::Invalid,
                format!("must be a whole number from 0 to {}, got {i}", n.max(1) - 1),
            ));
        }
        Ok((i as usize, &self.steps[i as usize]))
    }
}

/// The history bin of time `t_s` in a run ending at `end_s`.
fn bin_of(t_s: f64, end_s: f64) -> usize {
    let x = if end_s > 0.0 { t_s / end_s } else { 0.0 };
    ((x * REPLICA_HISTORY_BINS as f64) as usize).min(REPLICA_HISTORY_BINS - 1)
}

#[wasm_bindgen]
impl ReplicaPlayer {
    /// Runs `config` (the CLI's JSON schema) and traces its first window. An offered load is
    /// a fraction of `capacity` if given (a lab's `capacity()`, so the player runs the very
    /// point its readouts come from, without measuring again), else of a capacity measured
    /// here. Throws an `Error` naming the field on bad input.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue, capacity: JsValue) -> Result<ReplicaPlayer, Fault> {
        let config = boundary::config(&config)?;
        let scenario = if capacity.is_undefined() || capacity.is_null() {
            kneelab_sim::prepare_scenario(&config)
        } else {
            Scenario::resolve(&config, &boundary::capacity(&capacity)?)
        };
        ReplicaPlayer::of(&scenario.map_err(boundary::core)?)
    }

    /// Traces the window of iterations starting at or after `from_s` (simulated seconds) in
    /// place of the current one; returns its length (0 past the run's end).
    #[wasm_bindgen(js_name = traceFrom)]
    pub fn trace_from(&mut self, from_s: JsValue) -> Result<u32, Fault> {
        let from_s = boundary::number(&from_s, "from_s")?;
        if !from_s.is_finite() {
            return Err(Fault::new("from_s", Kind::Invalid, format!("must be a finite time, got {from_s}")));
        }
        self.trace(from_s.max(0.0))?;
        Ok(self.steps.len() as u32)
    }

    /// Iterations in the traced window.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> u32 {
        self.steps.len() as u32
    }

    /// When the run ended, in simulated seconds.
    #[wasm_bindgen(getter, js_name = endS)]
    pub fn end_s(&self) -> f64 {
        self.end_s
    }

    /// Engine iterations in the whole run (a decode jump over `k` steps counts `k`).
    #[wasm_bindgen(getter, js_name = totalSteps)]
    pub fn total_steps(&self) -> f64 {
        self.total_steps as f64
    }

    /// The TTFT SLO the clocks turn at, in seconds.
    #[wasm_bindgen(getter, js_name = ttftSloS)]
    pub fn ttft_slo_s(&self) -> f64 {
        self.ttft_slo_s
    }

    /// Each traced iteration's start, in simulated seconds.
    #[wasm_bindgen(js_name = startTimes)]
    pub fn start_times(&self) -> Vec<f64> {
        self.steps.iter().map(|s| s.t_s).collect()
    }

    /// Each traced iteration's duration, in simulated seconds (the engine may idle between one
    /// and the next start).
    pub fn durations(&self) -> Vec<f64> {
        self.steps.iter().map(|s| s.duration_s).collect()
    }

    /// The most requests waiting in each of the run's equal stretches, start to end.
    pub fn history(&self) -> Vec<u32> {
        self.history.clone()
    }

    /// The queue over the whole run: `{peak, peak_s, last, empty_steps, steps,
    /// emptied_after_peak}`.
    pub fn queue(&self) -> Result<JsValue, Fault> {
        to_js(&self.queue)
    }

    /// When the first step after `after_s` that preempted a request started, or -1 if none did.
    #[wasm_bindgen(js_name = nextPreemption)]
    pub fn next_preemption(&self, after_s: JsValue) -> Result<f64, Fault> {
        let after_s = boundary::number(&after_s, "after_s")?;
        Ok(self.preemptions_s.iter().copied().find(|&t| t > after_s).unwrap_or(-1.0))
    }

    /// When the run's longest single iteration started.
    #[wasm_bindgen(getter, js_name = longestS)]
    pub fn longest_s(&self) -> f64 {
        self.longest_s
    }

    /// Traced iteration `index` as data: the `ReplicaView` snapshot's fields plus `index` (the
    /// run's step number), `duration_s`, `admitted`, `preempted`, `completed` (arrival indexes)
    /// and `arrived` (`[index, time]`).
    pub fn step(&self, index: JsValue) -> Result<JsValue, Fault> {
        to_js(self.at(&index)?.1)
    }

    /// Draws traced iteration `index`, `phase` (0-1) of the way through, on `canvas`, with the
    /// queue over the whole run beneath and the iteration marked on it.
    pub fn draw(
        &self,
        canvas: JsValue,
        dark: JsValue,
        chrome: JsValue,
        index: JsValue,
        phase: JsValue,
    ) -> Result<bool, Fault> {
        let (_, step) = self.at(&index)?;
        let phase = boundary::number(&phase, "phase")?;
        let (canvas, dark, chrome) = boundary::draw_target(&canvas, &dark, &chrome)?;
        let mut data = charts::replica_step_data(step, self.ttft_slo_s, phase);
        data.history.clone_from(&self.history);
        data.history_at = bin_of(step.t_s, self.end_s);
        charts::draw_on(&canvas, dark, chrome, |area, style| kneelab_plot::replica::draw(area, &data, style))
    }
}

#[cfg(test)]
mod tests {
    use kneelab_sim::{Config, Simulation};

    use super::*;

    /// The player, given a lab's capacity, runs the very point the lab's readouts come from.
    #[test]
    fn given_a_labs_capacity_it_runs_the_labs_point() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/rag.json")).unwrap();
        let mut config = Config::from_json(&text).unwrap();
        config.run.requests = 2_000;
        config.run.warmup_requests = Some(200);
        let mut lab = kneelab_lab::Lab::new(config.clone()).unwrap();
        lab.set_load(0.9).unwrap();
        lab.run_point().unwrap();
        let capacity = lab.capacity().expect("running the point measured it");
        config.load.offered_load = Some(0.9);
        let scenario = Scenario::resolve(&config, &capacity).unwrap();
        let player = ReplicaPlayer::of(&scenario).unwrap();
        let ran = Simulation::new(&scenario, Options::default()).run().unwrap().with_capacity(&capacity).summary;
        let point = &lab.point().expect("the point ran").outcome.summary;
        assert_eq!(format!("{ran:?}"), format!("{point:?}"));
        assert!(player.total_steps > 0 && !player.steps.is_empty());
    }
}

//! The lab's state between slider moves: the config, the replica's capacity, the sweep curves of
//! each load mode (computed one point at a time), and the run at the slider's load.
//!
//! What depends on what decides the cost of a change: the SLOs only re-judge runs already made;
//! the load re-runs the current point; anything else (engine, cost model, workload, run length,
//! seed) invalidates the capacity and both sweeps.

use kneelab_sim::sweep::{DEFAULT_ATTAINMENT_TARGET, SweepRun};
use kneelab_sim::{
    Capacity, Config, KneeRule, LoadConfig, LoadMode, Options, Outcome, Scenario, Simulation, Slo, Summary, Sweep,
    ThinkDist, exposition, simulate_with_capacity,
};
use wasm_bindgen::prelude::*;

use crate::boundary::{self, Fault, Kind, core as js_error};
use crate::charts::{self, Marker};
use crate::readouts::{self, PointView};
use crate::to_js;
use kneelab_plot::latency::YScale;

/// Requests traced for the timeline chart: a pool from the middle of the measured run, out of
/// which the chart shows the consecutive few whose waits are most typical of the run.
const TRACED: u32 = 64;

/// The run at the slider's load.
struct Point {
    load: f64,
    mode: LoadMode,
    outcome: Outcome,
    open_at_same_throughput: Option<Summary>,
}

/// One knee lab: owns the current config and draws into the canvases it is given.
#[wasm_bindgen]
pub struct Lab {
    config: Option<Config>,
    model_key: Option<Config>,
    closed_key: (Option<f64>, Option<ThinkDist>),
    load: f64,
    loads: Vec<f64>,
    capacity: Option<Capacity>,
    open: Option<SweepRun>,
    closed: Option<SweepRun>,
    /// The current mode's sweep judged under the current SLOs, and (in a closed loop) the open
    /// loop's finished one: cached, since every redraw reads them.
    assembled: Option<Sweep>,
    assembled_open: Option<Sweep>,
    point: Option<Point>,
    /// Whether the latency chart uses a log axis.
    latency_log: bool,
}

impl Default for Lab {
    fn default() -> Self {
        Lab::new()
    }
}

#[wasm_bindgen]
impl Lab {
    /// An empty lab; give it a config with `setConfig`.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Lab {
        Lab {
            config: None,
            model_key: None,
            closed_key: (None, None),
            load: kneelab_sim::schema::DEFAULT_LOAD,
            loads: kneelab_sim::schema::loads(),
            capacity: None,
            open: None,
            closed: None,
            assembled: None,
            assembled_open: None,
            point: None,
            latency_log: false,
        }
    }

    /// Takes a config (the CLI's JSON schema). Its `load` gives the mode and, for a closed loop,
    /// the think time; the offered load comes from `setLoad`. Throws an `Error` naming the field
    /// on bad input, and then keeps the previous config.
    #[wasm_bindgen(js_name = setConfig)]
    pub fn set_config(&mut self, config: JsValue) -> Result<(), Fault> {
        let mut config = boundary::config(&config)?;
        config.load = LoadConfig { offered_load: Some(1.0), rate_rps: None, users: None, ..config.load };
        config.validate().map_err(js_error)?;
        // What the capacity and the curves depend on: everything but the load and the SLOs...
        let model_key = Config { load: LoadConfig::default(), slo: Default::default(), ..config.clone() };
        // ...and, for the closed loop's curve, the think time.
        let closed_key = (config.load.think_time_s, config.load.think_dist);
        if self.model_key.as_ref() != Some(&model_key) {
            self.capacity = None;
            self.open = None;
            self.closed = None;
        } else if closed_key != self.closed_key {
            self.closed = None;
        }
        self.model_key = Some(model_key);
        self.closed_key = closed_key;
        self.config = Some(config);
        self.forget_assembled();
        Ok(())
    }

    /// Sets the offered load as a fraction of capacity (0 = no traffic; otherwise within the
    /// core's range, so a vanishing load is an error naming the field, not an endless run).
    #[wasm_bindgen(js_name = setLoad)]
    pub fn set_load(&mut self, load: JsValue) -> Result<(), Fault> {
        let load = boundary::number(&load, "load.offered_load")?;
        if load != 0.0 {
            kneelab_sim::scenario::check_offered_load("load.offered_load", load).map_err(js_error)?;
        }
        self.load = load;
        Ok(())
    }

    /// Whether the current mode's sweep still has work.
    #[wasm_bindgen(js_name = sweepPending)]
    pub fn sweep_pending(&self) -> bool {
        self.curve().is_none_or(|run| !run.is_done())
    }

    /// Does one slice of sweep work (measuring capacity, or one load point) and returns whether
    /// more remains, so the page can interleave the sweep with input.
    #[wasm_bindgen(js_name = sweepStep)]
    pub fn sweep_step(&mut self) -> Result<bool, Fault> {
        if self.curve().is_none() {
            self.start_curve()?;
            return Ok(true);
        }
        let mode = self.mode()?;
        let run = match mode {
            LoadMode::Open => self.open.as_mut(),
            LoadMode::Closed => self.closed.as_mut(),
        };
        let more = run.map_or(Ok(false), |r| r.step()).map_err(js_error)?;
        self.forget_assembled();
        Ok(more)
    }

    /// `{done, total}` load points of the current mode's sweep.
    #[wasm_bindgen(js_name = sweepProgress)]
    pub fn sweep_progress(&self) -> Result<JsValue, Fault> {
        #[derive(serde::Serialize)]
        struct Progress {
            done: usize,
            total: usize,
        }
        to_js(&Progress { done: self.curve().map_or(0, |r| r.outcomes().len()), total: self.loads.len() })
    }

    /// Runs the slider's load (measuring capacity first if needed) and returns the readouts.
    #[wasm_bindgen(js_name = runPoint)]
    pub fn run_point(&mut self) -> Result<JsValue, Fault> {
        if self.capacity.is_none() {
            self.start_curve()?;
        }
        let config = self.config.as_ref().ok_or_else(|| Fault::general(Kind::State, "setConfig first"))?;
        let capacity =
            self.capacity.ok_or_else(|| Fault::general(Kind::Internal, "the capacity could not be measured"))?;
        if self.load <= 0.0 {
            self.point = None;
            return self.readouts();
        }
        let at_load =
            Config { load: LoadConfig { offered_load: Some(self.load), ..config.load.clone() }, ..config.clone() };
        let scenario = Scenario::with_capacity(&at_load, capacity).map_err(js_error)?;
        let measured = scenario.requests.saturating_sub(scenario.warmup);
        let trace_from = u32::try_from(measured.saturating_sub(u64::from(TRACED)) / 2).unwrap_or(0);
        let options = Options { series: true, trace_requests: TRACED, trace_from, ..Options::default() };
        let outcome = Simulation::new(&scenario, options).run().map_err(js_error)?;
        // A closed loop also gets an open loop offered the throughput it achieved, so the page can
        // compare the two at the same throughput, not only at the same slider position.
        let open_at_same_throughput = match config.load.mode {
            LoadMode::Open => None,
            LoadMode::Closed => {
                let rate_rps = outcome.summary.throughput_rps;
                let open = Config { load: LoadConfig::open_rate(rate_rps), ..config.clone() };
                (rate_rps > 0.0).then(|| simulate_with_capacity(&open, capacity)).transpose().map_err(js_error)?
            }
        };
        self.point = Some(Point { load: self.load, mode: config.load.mode, outcome, open_at_same_throughput });
        self.readouts()
    }

    /// Every live number, keyed by `data-metric` name, in the Summary's units (`null` if unknown).
    pub fn readouts(&mut self) -> Result<JsValue, Fault> {
        let slo = self.slo();
        self.sweep(); // fills the cache, read below alongside the point
        let sweep = self.assembled.as_ref();
        let point = self.current_point().map(|p| PointView {
            summary: &p.outcome.summary,
            goodput: p.outcome.goodput(slo),
            final_state: (p.outcome.final_state.num_requests_running, p.outcome.final_state.num_requests_waiting),
            open_at_same_throughput: p.open_at_same_throughput.as_ref(),
            series: (&p.outcome.series, p.outcome.end_s),
        });
        let mut r = readouts::build(point, sweep, self.capacity);
        if let Some(p) = self.current_point() {
            // The requests the timeline shows, and how their waits compare with the run's.
            let shown = charts::typical_window(&p.outcome.traces, p.outcome.summary.queue_s.mean);
            r.insert("timeline_wait_mean_s".into(), (!shown.is_empty()).then(|| charts::mean_wait_s(shown)));
            r.insert("timeline_first_id".into(), shown.first().map(|t| t.id as f64));
        }
        r.insert("slo_ttft_s".into(), Some(slo.ttft_s));
        r.insert("slo_tpot_s".into(), Some(slo.tpot_s));
        r.insert("load".into(), Some(self.load));
        to_js(&r)
    }

    /// The current mode's sweep so far (the CLI's `sweep` JSON), judged under the current SLOs.
    #[wasm_bindgen(js_name = sweepResult)]
    pub fn sweep_result(&mut self) -> Result<JsValue, Fault> {
        match self.sweep() {
            Some(s) => to_js(s),
            None => Ok(JsValue::NULL),
        }
    }

    /// The current run as vLLM's `/metrics` would show it (Prometheus text).
    #[wasm_bindgen(js_name = metricsText)]
    pub fn metrics_text(&self, model_name: JsValue) -> Result<String, Fault> {
        let model_name = boundary::string(&model_name, "model_name")?;
        Ok(self.current_point().map(|p| exposition::prometheus_text(&p.outcome, &model_name)).unwrap_or_default())
    }

    /// Draws TTFT p50/p99 against load; returns false if the canvas is not laid out.
    #[wasm_bindgen(js_name = drawLatency)]
    pub fn draw_latency(&mut self, canvas: JsValue, dark: JsValue) -> Result<bool, Fault> {
        let (canvas, dark) = boundary::draw_target(&canvas, &dark)?;
        let (marker, slo, rule) = (self.marker(), self.slo(), self.knee_rule());
        // In a closed loop, the open loop's finished curve stays in view for comparison.
        if self.mode()? == LoadMode::Closed && self.assembled_open.is_none() {
            self.assembled_open =
                self.open.as_ref().filter(|r| r.is_done()).map(|r| r.assemble(slo, rule, DEFAULT_ATTAINMENT_TARGET));
        }
        self.sweep();
        let compare = match self.mode()? {
            LoadMode::Closed => self.assembled_open.as_ref().map(|s| (s, "p99 open loop")),
            LoadMode::Open => None,
        };
        let scale = if self.latency_log { YScale::Log } else { YScale::Linear };
        let data = charts::latency_data(self.assembled.as_ref(), compare, marker, slo.ttft_s, scale);
        charts::draw_on(&canvas, dark, |area, style| kneelab_plot::latency::draw(area, &data, style))
    }

    /// Draws throughput and goodput against load.
    #[wasm_bindgen(js_name = drawThroughput)]
    pub fn draw_throughput(&mut self, canvas: JsValue, dark: JsValue) -> Result<bool, Fault> {
        let (canvas, dark) = boundary::draw_target(&canvas, &dark)?;
        let marker = self.marker();
        let data = charts::throughput_data(self.sweep(), marker);
        charts::draw_on(&canvas, dark, |area, style| kneelab_plot::throughput::draw(area, &data, style))
    }

    /// Draws the latency chart on a log axis (`true`) or a linear one from 0 (`false`, the
    /// default: the tear away from p50 is an absolute one).
    #[wasm_bindgen(js_name = setLatencyLog)]
    pub fn set_latency_log(&mut self, log: JsValue) -> Result<(), Fault> {
        self.latency_log = log.as_bool().ok_or_else(|| {
            Fault::new("log", Kind::Type, format!("expected true or false, got {}", boundary::describe(&log)))
        })?;
        Ok(())
    }

    /// Draws the replica's limits and its measured saturation.
    #[wasm_bindgen(js_name = drawLimits)]
    pub fn draw_limits(&mut self, canvas: JsValue, dark: JsValue) -> Result<bool, Fault> {
        let (canvas, dark) = boundary::draw_target(&canvas, &dark)?;
        let data = charts::limits_data(self.sweep());
        charts::draw_on(&canvas, dark, |area, style| kneelab_plot::limits::draw(area, &data, style))
    }

    /// Draws TTFT by percentile at the lesson's two compared loads (`schema::COMPARE_LOADS`, from
    /// the sweep) and at the slider's, on axes that stay put while the slider moves.
    #[wasm_bindgen(js_name = drawTail)]
    pub fn draw_tail(&self, canvas: JsValue, dark: JsValue) -> Result<bool, Fault> {
        let (canvas, dark) = boundary::draw_target(&canvas, &dark)?;
        let outcomes = self.curve().map(SweepRun::outcomes).unwrap_or_default();
        let references: Vec<(f64, &[f64])> = kneelab_sim::schema::COMPARE_LOADS
            .iter()
            .filter_map(|&c| {
                let i = self.loads.iter().position(|&l| (l - c).abs() < 1e-9)?;
                outcomes.get(i).map(|o| (c, &o.ttft_samples_s[..]))
            })
            .collect();
        let current = self.current_point().map(|p| (p.load, &p.outcome.ttft_samples_s[..]));
        let data = charts::tail_data(&references, current, self.slo().ttft_s);
        charts::draw_on(&canvas, dark, |area, style| kneelab_plot::tail::draw(area, &data, style))
    }

    /// Draws `num_requests_running` and `num_requests_waiting` over the current run.
    #[wasm_bindgen(js_name = drawQueue)]
    pub fn draw_queue(&self, canvas: JsValue, dark: JsValue) -> Result<bool, Fault> {
        let (canvas, dark) = boundary::draw_target(&canvas, &dark)?;
        let seqs = self.config.as_ref().map_or(0, |c| c.engine.max_num_seqs);
        let data = match self.current_point() {
            Some(p) => charts::queue_data(&p.outcome.series, p.outcome.end_s, seqs),
            None => charts::queue_data(&[], 0.0, seqs),
        };
        charts::draw_on(&canvas, dark, |area, style| kneelab_plot::queue::draw(area, &data, style))
    }

    /// Draws the two clocks: a few requests' queue wait, prefill and token drip.
    #[wasm_bindgen(js_name = drawTimeline)]
    pub fn draw_timeline(&self, canvas: JsValue, dark: JsValue) -> Result<bool, Fault> {
        let (canvas, dark) = boundary::draw_target(&canvas, &dark)?;
        let data = self
            .current_point()
            .map(|p| charts::timeline_data(&p.outcome.traces, p.outcome.summary.queue_s.mean))
            .unwrap_or_default();
        charts::draw_on(&canvas, dark, |area, style| kneelab_plot::timeline::draw(area, &data, style))
    }

    /// Draws goodput against the TTFT SLO at the current load (TPOT SLO held).
    #[wasm_bindgen(js_name = drawGoodputSlo)]
    pub fn draw_goodput_slo(&self, canvas: JsValue, dark: JsValue) -> Result<bool, Fault> {
        let (canvas, dark) = boundary::draw_target(&canvas, &dark)?;
        let slo = self.slo();
        let mut data = kneelab_plot::goodput_slo::GoodputSloData::default();
        if let Some(p) = self.current_point() {
            // From 50 ms to 100 s, 8 points a decade.
            for i in 0..=26 {
                let ttft_s = 0.05 * 10f64.powf(i as f64 / 8.0);
                let g = p.outcome.goodput(Slo { ttft_s, tpot_s: slo.tpot_s });
                data.slo_s.push(ttft_s);
                data.goodput_rps.push(g.goodput_rps);
                data.throughput_rps.push(p.outcome.summary.throughput_rps);
            }
            data.current_slo_s = Some(slo.ttft_s);
        }
        charts::draw_on(&canvas, dark, |area, style| kneelab_plot::goodput_slo::draw(area, &data, style))
    }
}

impl Lab {
    fn mode(&self) -> Result<LoadMode, Fault> {
        self.config.as_ref().map(|c| c.load.mode).ok_or_else(|| Fault::general(Kind::State, "setConfig first"))
    }

    fn knee_rule(&self) -> KneeRule {
        self.config.as_ref().map(|c| c.slo.knee).unwrap_or_default()
    }

    fn slo(&self) -> Slo {
        let slo = self.config.as_ref().map(|c| c.slo.clone()).unwrap_or_default();
        Slo { ttft_s: slo.ttft_ms / 1e3, tpot_s: slo.tpot_ms / 1e3 }
    }

    /// The sweep run of the current mode.
    fn curve(&self) -> Option<&SweepRun> {
        match self.config.as_ref()?.load.mode {
            LoadMode::Open => self.open.as_ref(),
            LoadMode::Closed => self.closed.as_ref(),
        }
    }

    /// Starts the current mode's sweep, measuring the capacity if it is not known.
    fn start_curve(&mut self) -> Result<(), Fault> {
        let config = self.config.as_ref().ok_or_else(|| Fault::general(Kind::State, "setConfig first"))?;
        let run = SweepRun::new(config, &self.loads, self.capacity).map_err(js_error)?;
        self.capacity = Some(run.capacity());
        match config.load.mode {
            LoadMode::Open => self.open = Some(run),
            LoadMode::Closed => self.closed = Some(run),
        }
        self.forget_assembled();
        Ok(())
    }

    /// Drops the judged sweeps: the runs, the mode or the SLOs changed.
    fn forget_assembled(&mut self) {
        self.assembled = None;
        self.assembled_open = None;
    }

    /// The current mode's sweep so far, under the current SLOs (cached until something changes).
    fn sweep(&mut self) -> Option<&Sweep> {
        if self.assembled.is_none() {
            let (slo, rule) = (self.slo(), self.knee_rule());
            self.assembled = self.curve().map(|run| run.assemble(slo, rule, DEFAULT_ATTAINMENT_TARGET));
        }
        self.assembled.as_ref()
    }

    /// The current run, if it matches the current mode and load.
    fn current_point(&self) -> Option<&Point> {
        let mode = self.config.as_ref()?.load.mode;
        self.point.as_ref().filter(|p| p.mode == mode && p.load == self.load)
    }

    fn marker(&self) -> Marker {
        let slo = self.slo();
        match self.current_point() {
            Some(p) => {
                let s = &p.outcome.summary;
                Marker {
                    load: Some(p.load),
                    p50_s: Some(s.ttft_s.p50),
                    p99_s: Some(s.ttft_s.p99),
                    throughput_rps: Some(s.throughput_rps),
                    goodput_rps: Some(p.outcome.goodput(slo).goodput_rps),
                }
            }
            None => Marker { load: (self.load > 0.0).then_some(self.load), ..Marker::default() },
        }
    }
}

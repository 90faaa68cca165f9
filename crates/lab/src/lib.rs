//! The lesson's experiments as one state machine: a config, the replica's capacity, the sweep of
//! each load mode (computed a few thousand engine steps at a time, so a page answers input),
//! the run at the slider's load, and the comparisons the lesson draws from them.
//!
//! What depends on what decides the cost of a change:
//! - the SLOs and the knee rule only re-judge runs already made;
//! - the load re-runs the current point;
//! - the think time drops the closed loop's sweep;
//! - anything else (engine, cost model, workload, run length, seed) drops the capacity and both
//!   sweeps.
//!
//! A steady run ([`Lab::steady_start`]) re-runs the slider's load with the engine's most requests,
//! a slice at a time, for tails that hold still across seeds; any change drops it.
//!
//! Pure and deterministic like kneelab-sim; the page's wasm `Lab` only holds one and forwards. A
//! crate of its own so the page's build can optimise it for size while the engine below it is
//! optimised for speed.
#![warn(missing_docs)]

use kneelab_sim::scenario::closed_users;
use kneelab_sim::sweep::{DEFAULT_ATTAINMENT_TARGET, SweepRun};
use kneelab_sim::{
    Capacity, Config, ConfigError, KneeRule, LoadConfig, LoadMode, Options, Outcome, Scenario, Simulation, Slo,
    Summary, Sweep, ThinkDist, capacity, schema, settings, simulate_with_capacity,
};

/// Requests traced for the timeline: a pool from the middle of the measured run, out of which a
/// chart shows the consecutive few whose waits are most typical of the run.
pub const TRACED: u32 = 64;

/// The TTFT SLOs the goodput-by-SLO grid judges the current run under: from 50 ms, 8 a decade, to
/// 89 s.
pub fn slo_grid_s() -> impl Iterator<Item = f64> {
    (0..=26).map(|i| 0.05 * libm::pow(10.0, f64::from(i) / 8.0))
}

/// The run at the slider's load.
#[derive(Clone, Debug)]
pub struct Point {
    /// Offered load, as a fraction of capacity.
    pub load: f64,
    /// The load mode it ran in.
    pub mode: LoadMode,
    /// What the run measured (with its queue series and a traced window).
    pub outcome: Outcome,
    /// Closed loop only: an open loop offered the throughput the closed loop achieved, so the two
    /// can be compared at the same throughput, not only at the same slider position.
    pub open_at_same_throughput: Option<Summary>,
}

/// One side of the open-versus-closed comparison.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct LoopSide {
    /// Achieved throughput.
    pub throughput_rps: f64,
    /// TTFT p99.
    pub ttft_p99_s: f64,
}

/// The same replica at the same slider position in both load modes, and an open loop at the
/// closed loop's achieved throughput.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct LoopComparison {
    /// The slider's load it was computed at.
    pub load: f64,
    /// The replica's capacity.
    pub capacity_rps: f64,
    /// Open loop at the slider's load.
    pub open: LoopSide,
    /// Closed loop at the slider's load (as a demand: users sized from the unloaded latency).
    pub closed: LoopSide,
    /// The closed loop's users.
    pub users: u32,
    /// Open loop offered the closed loop's achieved throughput.
    pub open_at_closed_throughput: LoopSide,
}

/// Engine steps per slice of work (the capacity measurement, a sweep's load point, a steady run):
/// a few milliseconds in the browser, so a page answers input while the lab computes, even on a
/// machine several times slower.
pub const SLICE_STEPS: u64 = 4096;

/// Requests of a steady run: the engine's most. TTFT p99 at 85% load then moves by about 5% across
/// seeds for RAG, where the lab's usual 4,000 requests leave it moving by 70% (`cargo xtask bench
/// -- tails`).
pub const STEADY_REQUESTS: u32 = kneelab_sim::scenario::MAX_REQUESTS;

/// A steady run in progress: its replica's capacity measured over a share of its own length (see
/// [`capacity::completions`]), then the run.
#[derive(Clone, Debug)]
struct Steady {
    load: f64,
    config: Config,
    measuring: capacity::Measurement,
    run: Option<(Simulation, Capacity)>,
}

/// The lab: see the module's documentation.
#[derive(Clone, Debug)]
pub struct Lab {
    config: Config,
    load: f64,
    loads: Vec<f64>,
    capacity: Option<Capacity>,
    /// The capacity being measured a slice at a time by [`Lab::sweep_step`].
    measuring: Option<capacity::Measurement>,
    open: Option<SweepRun>,
    closed: Option<SweepRun>,
    /// The current mode's sweep judged under the current SLOs, and (in a closed loop) the open
    /// loop's finished one: cached, since every redraw reads them.
    judged: Option<Sweep>,
    judged_open: Option<Sweep>,
    point: Option<Point>,
    loops: Option<((f64, f64, ThinkDist), LoopComparison)>,
    /// The think time the closed sweep was started with.
    closed_think: (Option<f64>, ThinkDist),
    /// The burstiness the open sweep was started with.
    open_burstiness: Option<f64>,
    steady: Option<Box<Steady>>,
}

/// A closed config's think time and its distribution.
fn think(config: &Config) -> (Option<f64>, ThinkDist) {
    (config.load.think_time_s, config.load.think_dist.unwrap_or_default())
}

/// Whether `a` and `b` model the same replica: everything but the load and the SLOs, which the
/// capacity and both sweeps do not depend on. (Destructured, so a new Config field must be
/// placed on one side or the other.)
fn same_model(a: &Config, b: &Config) -> bool {
    let Config { seed, engine, cost, workload, run, load: _, slo: _ } = a;
    (seed, engine, cost, workload, run) == (&b.seed, &b.engine, &b.cost, &b.workload, &b.run)
}

/// The config the sweeps start from: its mode and think time, at the capacity's load. A lab's
/// run is also one of its lengths (`settings::LAB_REQUESTS`).
fn normalised(mut config: Config) -> Result<Config, ConfigError> {
    if config.load.mode == LoadMode::Burst {
        return Err(ConfigError::new("load.mode", "a lab sweeps offered load: use \"open\" or \"closed\""));
    }
    config.load = LoadConfig { offered_load: Some(1.0), rate_rps: None, users: None, ..config.load };
    config.validate()?;
    // Fewer is noise; more and dragging the slider is no longer fluid.
    let (least, most) = settings::LAB_REQUESTS;
    if !(least..=most).contains(&config.run.requests) {
        let message = format!("a lab runs {least} to {most} requests a point, got {}", config.run.requests);
        return Err(ConfigError::new("run.requests", message));
    }
    Ok(config)
}

impl Lab {
    /// A lab for `config` (the CLI's schema; its `load` gives the mode and, for a closed loop, the
    /// think time) at the schema's default load. Nothing runs until asked.
    pub fn new(config: Config) -> Result<Lab, ConfigError> {
        let config = normalised(config)?;
        Ok(Lab {
            config,
            load: schema::DEFAULT_LOAD,
            loads: schema::loads(),
            capacity: None,
            measuring: None,
            open: None,
            closed: None,
            judged: None,
            judged_open: None,
            point: None,
            loops: None,
            closed_think: (None, ThinkDist::default()),
            open_burstiness: None,
            steady: None,
        })
    }

    /// Takes a new config, keeping whatever it does not invalidate. On an error the lab keeps the
    /// config it had.
    pub fn set_config(&mut self, config: Config) -> Result<(), ConfigError> {
        let config = normalised(config)?;
        self.drop_steady();
        if !same_model(&self.config, &config) {
            self.capacity = None;
            self.measuring = None;
            self.open = None;
            self.closed = None;
            self.loops = None;
        } else if config.load.mode == LoadMode::Open
            && self.open.is_some()
            && config.load.burstiness != self.open_burstiness
        {
            // The arrivals' shape changes the open curve (not the capacity, a saturated closed loop's).
            self.open = None;
            self.loops = None;
        } else if config.load.mode == LoadMode::Closed && self.closed.is_some() && think(&config) != self.closed_think {
            // An open config carries no think time, so only a closed one can change the closed curve's.
            self.closed = None;
        }
        self.config = config;
        self.forget_judged();
        Ok(())
    }

    /// Sets the offered load as a fraction of capacity (see [`check_load`]).
    pub fn set_load(&mut self, load: f64) -> Result<(), ConfigError> {
        check_load(load)?;
        self.load = load;
        self.drop_steady();
        Ok(())
    }

    /// The config in force (its load normalised to the capacity's).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The offered load.
    pub fn load(&self) -> f64 {
        self.load
    }

    /// The sweeps' load grid.
    pub fn loads(&self) -> &[f64] {
        &self.loads
    }

    /// The load mode in force.
    pub fn mode(&self) -> LoadMode {
        self.config.load.mode
    }

    /// The SLOs in force.
    pub fn slo(&self) -> Slo {
        self.config.slo.slo()
    }

    /// The knee rule in force.
    pub fn knee_rule(&self) -> KneeRule {
        self.config.slo.knee
    }

    /// The replica's capacity, once measured.
    pub fn capacity(&self) -> Option<Capacity> {
        self.capacity
    }

    /// The current mode's sweep run.
    pub fn curve(&self) -> Option<&SweepRun> {
        match self.mode() {
            LoadMode::Open => self.open.as_ref(),
            LoadMode::Closed | LoadMode::Burst => self.closed.as_ref(),
        }
    }

    /// Load points run so far by `mode`'s sweep (`None` when it has not started, or was dropped).
    pub fn points_done(&self, mode: LoadMode) -> Option<usize> {
        match mode {
            LoadMode::Open => self.open.as_ref(),
            LoadMode::Closed | LoadMode::Burst => self.closed.as_ref(),
        }
        .map(|r| r.outcomes().len())
    }

    /// Whether the current mode's sweep still has work.
    pub fn sweep_pending(&self) -> bool {
        self.curve().is_none_or(|run| !run.is_done())
    }

    /// Load points of the current mode's sweep done so far, and in all.
    pub fn progress(&self) -> (usize, usize) {
        (self.curve().map_or(0, |r| r.outcomes().len()), self.loads.len())
    }

    /// One slice of sweep work (of the capacity measurement, or of a load point); returns whether
    /// more remains.
    pub fn sweep_step(&mut self) -> Result<bool, ConfigError> {
        if self.curve().is_none() {
            if self.capacity.is_none() {
                let m = match &mut self.measuring {
                    Some(m) => m,
                    None => self.measuring.insert(capacity::Measurement::new(&Scenario::saturated(&self.config)?)),
                };
                let Some(c) = m.advance(SLICE_STEPS) else { return Ok(true) };
                self.measuring = None;
                self.capacity = Some(c.usable()?);
            }
            self.start_curve()?;
            return Ok(true);
        }
        let run = match self.mode() {
            LoadMode::Open => self.open.as_mut(),
            LoadMode::Closed | LoadMode::Burst => self.closed.as_mut(),
        };
        let Some(run) = run else { return Ok(false) };
        let done = run.outcomes().len();
        let more = run.advance(SLICE_STEPS)?;
        if run.outcomes().len() != done {
            self.forget_judged();
        }
        Ok(more)
    }

    /// Starts a steady run at the slider's load, open loop only (a closed loop's point also runs
    /// an open loop at its throughput): [`Lab::steady_step`] does it a slice at a time, then it
    /// becomes the point.
    pub fn steady_start(&mut self) -> Result<(), ConfigError> {
        if self.mode() != LoadMode::Open || self.load <= 0.0 {
            return Err(ConfigError::new("load.offered_load", "a steady run is of an open loop under some load"));
        }
        let run = kneelab_sim::RunConfig { requests: STEADY_REQUESTS, warmup_requests: None };
        let config = Config { run, ..self.config.clone() };
        let measuring = capacity::Measurement::new(&Scenario::saturated(&config)?);
        self.steady = Some(Box::new(Steady { load: self.load, config, measuring, run: None }));
        Ok(())
    }

    /// One slice of the steady run; returns whether more remains. The run done, the point is its.
    pub fn steady_step(&mut self) -> Result<bool, ConfigError> {
        let Some(steady) = &mut self.steady else { return Ok(false) };
        let Some((sim, capacity)) = &mut steady.run else {
            if let Some(c) = steady.measuring.advance(SLICE_STEPS) {
                let c = c.usable()?;
                let scenario = scenario_at(&steady.config, steady.load, c)?;
                // No queue series or traces: a million requests' would fill memory for pictures
                // the point's usual run already draws.
                steady.run = Some((Simulation::new(&scenario, Options::default()), c));
            }
            return Ok(true);
        };
        if !(0..SLICE_STEPS).any(|_| !sim.step()) {
            return Ok(true);
        }
        let capacity = *capacity;
        let Steady { load, run, .. } = *self.steady.take().expect("the steady run just stepped");
        let (sim, _) = run.expect("its run just stepped");
        let mut outcome = sim.finish()?.with_capacity(&capacity);
        // The queue and the traced requests stay the usual run's, at the same load.
        if let Some(usual) = self.point.take().filter(|p| p.load == load && p.mode == LoadMode::Open) {
            (outcome.series, outcome.traces) = (usual.outcome.series, usual.outcome.traces);
        }
        self.point = Some(Point { load, mode: LoadMode::Open, outcome, open_at_same_throughput: None });
        Ok(false)
    }

    /// How far a steady run has come, from 0 to 1 (its capacity measured, then its requests
    /// simulated); `None` if there is none.
    pub fn steady_progress(&self) -> Option<f64> {
        let steady = self.steady.as_ref()?;
        Some(steady.run.as_ref().map_or(0.0, |(sim, _)| sim.arrived() as f64 / f64::from(STEADY_REQUESTS)))
    }

    /// Drops a steady run in progress (one place, so its memory's release is compiled once).
    #[inline(never)]
    fn drop_steady(&mut self) {
        self.steady = None;
    }

    /// Runs the slider's load (measuring the capacity first if needed).
    pub fn run_point(&mut self) -> Result<(), ConfigError> {
        self.drop_steady();
        let capacity = self.measured_capacity()?;
        if self.load <= 0.0 {
            self.point = None;
            return Ok(());
        }
        let config = &self.config;
        let scenario = scenario_at(config, self.load, capacity)?;
        // The sweep's draws are this run's too (same seed and workload), unless it is stale.
        let draws = self.curve().and_then(SweepRun::draws);
        let outcome = Simulation::replaying(&scenario, point_options(&scenario), draws).run()?.with_capacity(&capacity);
        let open_at_same_throughput = match config.load.mode {
            LoadMode::Open | LoadMode::Burst => None,
            LoadMode::Closed => open_at(config, outcome.summary.throughput_rps, capacity)?,
        };
        self.point = Some(Point { load: self.load, mode: config.load.mode, outcome, open_at_same_throughput });
        Ok(())
    }

    /// The current run, if it matches the current mode and load.
    pub fn point(&self) -> Option<&Point> {
        self.point.as_ref().filter(|p| p.mode == self.mode() && p.load == self.load)
    }

    /// The current mode's sweep so far, judged under the current SLOs (cached).
    pub fn sweep(&mut self) -> Option<&Sweep> {
        if self.judged.is_none() {
            let (slo, rule) = (self.slo(), self.knee_rule());
            self.judged = self.curve().map(|run| run.assemble(slo, rule, DEFAULT_ATTAINMENT_TARGET));
        }
        self.judged.as_ref()
    }

    /// The judged sweep as last cached by [`Lab::sweep`] (`None` before that, or after a change).
    pub fn judged(&self) -> Option<&Sweep> {
        self.judged.as_ref()
    }

    /// The open loop's sweep as last cached by [`Lab::open_sweep_for_compare`] (closed loop only).
    pub fn judged_open(&self) -> Option<&Sweep> {
        self.judged_open.as_ref().filter(|_| self.mode() == LoadMode::Closed)
    }

    /// In a closed loop, the open loop's sweep once it has finished (for comparison on the same
    /// chart); `None` in an open loop.
    pub fn open_sweep_for_compare(&mut self) -> Option<&Sweep> {
        if self.mode() != LoadMode::Closed {
            return None;
        }
        if self.judged_open.is_none() {
            let (slo, rule) = (self.slo(), self.knee_rule());
            self.judged_open =
                self.open.as_ref().filter(|r| r.is_done()).map(|r| r.assemble(slo, rule, DEFAULT_ATTAINMENT_TARGET));
        }
        self.judged_open.as_ref()
    }

    /// TTFT samples of the current mode's sweep at the lesson's compared loads
    /// ([`schema::COMPARE_LOADS`]), for those already run.
    pub fn compare_samples(&self) -> Vec<(f64, &[f64])> {
        let outcomes = self.curve().map(SweepRun::outcomes).unwrap_or_default();
        schema::COMPARE_LOADS
            .iter()
            .filter_map(|&c| {
                let i = self.loads.iter().position(|&l| (l - c).abs() < 1e-9)?;
                outcomes.get(i).map(|o| (c, o.request_samples.ttft_s()))
            })
            .collect()
    }

    /// The current run's goodput under each TTFT SLO of [`slo_grid_s`] (the TPOT SLO held), with
    /// its throughput: `(ttft_slo_s, goodput_rps)`.
    pub fn goodput_by_ttft_slo(&self) -> Vec<(f64, f64)> {
        let Some(p) = self.point() else { return Vec::new() };
        let tpot_s = self.slo().tpot_s;
        slo_grid_s().map(|ttft_s| (ttft_s, p.outcome.goodput(Slo { ttft_s, tpot_s }).goodput_rps)).collect()
    }

    /// Both load modes at the slider's load, and an open loop at the closed loop's throughput;
    /// `None` at no load. The closed side's users think `think_s` on average (the config's think
    /// time in a closed loop; in an open loop, the one the page would switch to). What the current
    /// point already ran is reused; the rest is cached until the load, the model or `think_s`
    /// changes.
    pub fn compare_loops(&mut self, think_s: f64) -> Result<Option<LoopComparison>, ConfigError> {
        let capacity = self.measured_capacity()?;
        if self.load <= 0.0 {
            return Ok(None);
        }
        let key = (self.load, think_s, self.config.load.think_dist.unwrap_or_default());
        if let Some((_, c)) = self.loops.filter(|(k, _)| *k == key) {
            return Ok(Some(c));
        }
        let comparison = compare(&self.config, capacity, self.load, think_s, self.point())?;
        self.loops = Some((key, comparison));
        Ok(Some(comparison))
    }

    fn measured_capacity(&mut self) -> Result<Capacity, ConfigError> {
        if self.capacity.is_none() {
            // A measurement begun in slices is finished here, where it stands.
            if let Some(mut m) = self.measuring.take() {
                let c = m.advance(u64::MAX).expect("an unbounded slice finishes the measurement");
                self.capacity = Some(c.usable()?);
            }
            self.start_curve()?;
        }
        self.capacity.ok_or_else(|| ConfigError::new("", "the replica's capacity could not be measured"))
    }

    /// Starts the current mode's sweep, measuring the capacity if it is not known.
    fn start_curve(&mut self) -> Result<(), ConfigError> {
        let run = match self.capacity {
            Some(capacity) => SweepRun::with_capacity(&self.config, &self.loads, capacity)?,
            None => SweepRun::new(&self.config, &self.loads)?,
        };
        self.capacity = Some(run.capacity());
        match self.mode() {
            LoadMode::Open => {
                self.open = Some(run);
                self.open_burstiness = self.config.load.burstiness;
            }
            LoadMode::Closed | LoadMode::Burst => {
                self.closed = Some(run);
                self.closed_think = think(&self.config);
            }
        }
        self.forget_judged();
        Ok(())
    }

    fn forget_judged(&mut self) {
        self.judged = None;
        self.judged_open = None;
    }
}

/// Checks a lab's offered load: 0 (no traffic), or within the core's range for a fraction of
/// capacity (so a vanishing load is an error naming the field, not an endless run) and no higher
/// than the lab's slider goes.
pub fn check_load(load: f64) -> Result<(), ConfigError> {
    if load == 0.0 {
        return Ok(());
    }
    kneelab_sim::scenario::check_offered_load("load.offered_load", load)?;
    if load > settings::LOAD_MAX {
        let message = format!("a lab's slider goes from {} to {}, got {load}", settings::LOAD_MIN, settings::LOAD_MAX);
        return Err(ConfigError::new("load.offered_load", message));
    }
    Ok(())
}

/// An open loop offered `rate_rps` with `config`'s model (`None` at no rate).
fn open_at(config: &Config, rate_rps: f64, capacity: Capacity) -> Result<Option<Summary>, ConfigError> {
    let open = Config { load: LoadConfig::open_rate(rate_rps), ..config.clone() };
    (rate_rps > 0.0).then(|| simulate_with_capacity(&open, capacity)).transpose()
}

/// What [`Lab::compare_loops`] gives for a lab of `config` whose measured capacity is `capacity`,
/// at `load`, computed afresh (a page that holds the lab's config and capacity, not the lab,
/// gets the same comparison); `None` at no load.
pub fn compare_loops(
    config: Config,
    capacity: Capacity,
    load: f64,
    think_s: f64,
) -> Result<Option<LoopComparison>, ConfigError> {
    let config = normalised(config)?;
    check_load(load)?;
    if load <= 0.0 {
        return Ok(None);
    }
    compare(&config, capacity, load, think_s, None).map(Some)
}

/// The run a lab of `config` whose measured capacity is `capacity` makes at `load`, without the
/// queue series and traced window the lab keeps for its charts (which change nothing in a run):
/// the same Outcome otherwise. `None` at no load.
pub fn point_outcome(config: Config, capacity: Capacity, load: f64) -> Result<Option<Outcome>, ConfigError> {
    let config = normalised(config)?;
    check_load(load)?;
    if load <= 0.0 {
        return Ok(None);
    }
    let scenario = scenario_at(&config, load, capacity)?;
    Ok(Some(Simulation::new(&scenario, Options::default()).run()?.with_capacity(&capacity)))
}

/// What the point's run records: the queue's series and a pool of traces from the middle of its
/// measured requests.
fn point_options(scenario: &Scenario) -> Options {
    let measured = scenario.requests.saturating_sub(scenario.warmup);
    let trace_from = u32::try_from(measured.saturating_sub(u64::from(TRACED)) / 2).unwrap_or(0);
    Options { series: true, trace_requests: TRACED, trace_from, ..Options::default() }
}

/// `config` resolved at offered load `load` against `capacity`.
fn scenario_at(config: &Config, load: f64, capacity: Capacity) -> Result<Scenario, ConfigError> {
    let at_load = Config { load: LoadConfig { offered_load: Some(load), ..config.load.clone() }, ..config.clone() };
    Scenario::resolve(&at_load, &capacity)
}

/// Both load modes at `load`, and an open loop at the closed loop's throughput, for a normalised
/// `config`; `point` (the lab's run at `load`, if any) stands in for the side it already ran.
fn compare(
    config: &Config,
    capacity: Capacity,
    load: f64,
    think_s: f64,
    point: Option<&Point>,
) -> Result<LoopComparison, ConfigError> {
    let dist = config.load.think_dist.unwrap_or_default();
    let base = Config { load: LoadConfig::default(), ..config.clone() };
    let users = closed_users(load, think_s, &capacity);
    let side = |s: &Summary| LoopSide { throughput_rps: s.throughput_rps, ttft_p99_s: s.ttft_s.p99 };
    // The comparison's open loops are Poisson: a bursty slider run is not one of its sides.
    let poisson = config.load.burstiness.is_none_or(|b| b == 1.0);
    let open = match point.filter(|p| p.mode == LoadMode::Open && poisson) {
        Some(p) => side(&p.outcome.summary),
        None => {
            side(&simulate_with_capacity(&Config { load: LoadConfig::open_offered(load), ..base.clone() }, capacity)?)
        }
    };
    // The point is the closed side only if it thinks `think_s`.
    let (closed, same) = match point.filter(|p| p.mode == LoadMode::Closed && config.load.think_time_s == Some(think_s))
    {
        Some(p) => (side(&p.outcome.summary), p.open_at_same_throughput.as_ref().map(side)),
        None => {
            let load = LoadConfig { think_dist: Some(dist), ..LoadConfig::closed(users, think_s) };
            let closed = simulate_with_capacity(&Config { load, ..base.clone() }, capacity)?;
            (side(&closed), open_at(&base, closed.throughput_rps, capacity)?.as_ref().map(side))
        }
    };
    Ok(LoopComparison {
        load,
        capacity_rps: capacity.rps,
        open,
        closed,
        users,
        open_at_closed_throughput: same.unwrap_or(LoopSide { throughput_rps: 0.0, ttft_p99_s: 0.0 }),
    })
}

//! Sweeps over offered load: one run per load with the same seed (common random numbers, so the
//! curves are smooth), the knee, the saturation point and DistServe's goodput.

use serde::{Deserialize, Serialize};

use crate::capacity;
use crate::config::{Config, KneeRule, LoadConfig, LoadMode};
use crate::error::ConfigError;
use crate::limits::{self, Limits};
use crate::scenario::{Capacity, Scenario, Slo};
use crate::simulation::{Draws, Options, Simulation};
use crate::sizing::SizingBasis;
use crate::summary::{Outcome, Summary};
use std::sync::Arc;

/// The SLO attainment that defines the knee by default (DistServe's 90%).
pub const DEFAULT_ATTAINMENT_TARGET: f64 = 0.9;

/// One load point of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Offered load as a fraction of capacity.
    pub offered_load: f64,
    /// Open loop: the arrival rate the run drew (`Summary::arrival_rate_rps`); closed loop: the
    /// rate the users would offer unloaded.
    pub offered_rps: f64,
    /// The run's summary.
    pub summary: Summary,
    /// Which p99s are within the sweep's SLOs (the rule [`KneeRule::P99`] judges the knee by).
    pub p99_within_slo: P99Within,
}

/// Whether a run's TTFT p99 and TPOT p99 are each within their SLO. A run that completed
/// nothing meets neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct P99Within {
    /// TTFT p99 at or below the TTFT SLO.
    pub ttft: bool,
    /// TPOT p99 at or below the TPOT SLO.
    pub tpot: bool,
}

impl P99Within {
    /// `summary`'s p99s judged against `slo`.
    pub fn judge(summary: &Summary, slo: Slo) -> P99Within {
        let done = summary.requests_completed > 0;
        P99Within { ttft: done && summary.ttft_s.p99 <= slo.ttft_s, tpot: done && summary.tpot_s.p99 <= slo.tpot_s }
    }

    /// Both within.
    pub fn both(self) -> bool {
        self.ttft && self.tpot
    }
}

/// The SLO knee: the highest offered load (of an unbroken run from the lowest) whose requests
/// meet the SLOs by the sweep's [`KneeRule`]. Not the saturation point, which is where
/// throughput stops rising.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// The highest offered load (of an unbroken run from the lowest) meeting the rule.
    pub offered_load: f64,
    /// Its offered rate.
    pub offered_rps: f64,
    /// Its achieved throughput: the per-replica QPS to size a fleet with.
    pub throughput_rps: f64,
    /// Its goodput.
    pub goodput_rps: f64,
    /// Its SLO attainment.
    pub slo_attainment: f64,
    /// Its TTFT p99.
    pub ttft_p99_s: f64,
    /// Its TPOT p99.
    pub tpot_p99_s: f64,
}

/// Where a p99 first exceeds its SLO, walking up the loads: interpolated linearly between the
/// last point within it and the first past it (`None` if it never does in the sweep, or already
/// does at the lowest load).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct P99Crossing {
    /// TTFT p99 against the TTFT SLO.
    pub ttft_load: Option<f64>,
    /// TPOT p99 against the TPOT SLO.
    pub tpot_load: Option<f64>,
}

/// Where throughput stops rising.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// The lowest offered load whose throughput is within 3% of the sweep's highest.
    pub offered_load: f64,
    /// The sweep's highest throughput.
    pub throughput_rps: f64,
}

/// A whole sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// The replica's measured capacity.
    pub capacity_rps: f64,
    /// Mean latency of a request alone on the replica.
    pub base_latency_s: f64,
    /// What the knee is judged on.
    pub knee_rule: KneeRule,
    /// The attainment target defining the knee (under [`KneeRule::Attainment`]).
    pub attainment_target: f64,
    /// One point per load, in the order given.
    pub points: Vec<SweepPoint>,
    /// The knee, if the lowest load meets the target.
    pub knee: Option<Knee>,
    /// The saturation point.
    pub saturation: Option<Saturation>,
    /// Where TTFT p99 and TPOT p99 cross their SLOs.
    pub p99_crossing: P99Crossing,
    /// DistServe's goodput: the highest offered rate with attainment at or above the target.
    pub distserve_goodput_rps: Option<f64>,
    /// The replica's limits (sequence cap, KV cache, prefill), estimated from its parameters,
    /// to set beside the measured saturation.
    pub limits: Limits,
    /// What a fleet is sized from, when the sweep has a saturation point.
    #[serde(default)]
    pub sizing: Option<SizingBasis>,
}

/// Options of a sweep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepOptions {
    /// Attainment defining the knee.
    pub attainment_target: f64,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions { attainment_target: DEFAULT_ATTAINMENT_TARGET }
    }
}

/// A sweep's loads when none are given: the lab's grid ([`crate::schema::loads`]), the CLI's
/// `--loads` default and the wasm `sweep()`'s. From, to, step.
pub const DEFAULT_GRID: [f64; 3] = [0.05, 1.2, 0.05];
/// [`DEFAULT_GRID`] as the CLI writes it, `FROM:TO:STEP` (a test holds the two together; the
/// page's wasm does not parse it, which would link a float parser into it).
pub const DEFAULT_LOADS: &str = "0.05:1.2:0.05";

/// [`DEFAULT_GRID`] as loads (a valid grid, so not checked again: the page's wasm keeps no
/// error text for it).
pub fn default_loads() -> Vec<f64> {
    let [from, to, step] = DEFAULT_GRID;
    grid(from, to, step)
}

/// Loads `from..=to` in steps of `step` (the CLI's `0.05:1.2:0.05`), rounded to kill float drift.
pub fn load_grid(from: f64, to: f64, step: f64) -> Result<Vec<f64>, ConfigError> {
    let ok = |v: f64| crate::scenario::check_offered_load("loads", v).is_ok();
    if !(ok(from) && ok(to) && step.is_finite() && step > 0.0 && from <= to) {
        return Err(ConfigError::new(
            "loads",
            format!(
                "want FROM:TO:STEP with {} <= FROM <= TO <= {} and STEP > 0, got {from}:{to}:{step}",
                crate::scenario::MIN_OFFERED_LOAD,
                crate::scenario::MAX_OFFERED_LOAD
            ),
        ));
    }
    let n = grid_len(from, to, step);
    if n > 1000 {
        return Err(ConfigError::new("loads", format!("at most 1000 load points, got {n}")));
    }
    Ok(grid(from, to, step))
}

fn grid_len(from: f64, to: f64, step: f64) -> usize {
    ((to - from) / step + 1e-9).floor() as usize + 1
}

/// The loads of a grid [`load_grid`] has checked.
fn grid(from: f64, to: f64, step: f64) -> Vec<f64> {
    (0..grid_len(from, to, step)).map(|i| ((from + step * i as f64) * 1e9).round() / 1e9).collect()
}

/// A sweep that runs one load point at a time ([`SweepRun::step`]), or a few engine steps at a
/// time ([`SweepRun::advance`]), so a page can interleave it with input handling and draw the
/// curves as they fill in.
#[derive(Clone, Debug)]
pub struct SweepRun {
    base: Scenario,
    mode: LoadMode,
    capacity: Capacity,
    loads: Vec<f64>,
    outcomes: Vec<Outcome>,
    limits: Limits,
    /// The next point's run, part done, between [`SweepRun::advance`] calls.
    current: Option<Box<Simulation>>,
    /// The sizes and gaps every point draws alike, drawn once.
    #[cfg(feature = "replay")]
    draws: Arc<Draws>,
}

/// The most load points one sweep takes: each is a whole run.
pub const MAX_LOADS: usize = 1000;

/// Checks a sweep's loads: at most [`MAX_LOADS`], each within
/// [`check_offered_load`](crate::scenario::check_offered_load)'s range.
pub fn load_check(loads: &[f64]) -> Result<(), ConfigError> {
    if loads.len() > MAX_LOADS {
        return Err(ConfigError::new("loads", format!("at most {MAX_LOADS} load points, got {}", loads.len())));
    }
    for (i, &load) in loads.iter().enumerate() {
        crate::scenario::check_offered_load(&format!("loads[{i}]"), load)?;
    }
    Ok(())
}

impl SweepRun {
    /// Validates `config` and `loads` and measures the capacity. The config's load mode and
    /// think time are kept; its rate, users or offered load are not.
    pub fn new(config: &Config, loads: &[f64]) -> Result<SweepRun, ConfigError> {
        SweepRun::start(config, loads, None)
    }

    /// Like [`SweepRun::new`] but reusing a capacity measured before for the same engine, cost
    /// model and workload.
    pub fn with_capacity(config: &Config, loads: &[f64], capacity: Capacity) -> Result<SweepRun, ConfigError> {
        SweepRun::start(config, loads, Some(capacity))
    }

    /// Checks the sweep, then resolves its config at offered load 1 against the capacity it was
    /// given, or measures one (one body for both constructors: the page's wasm carries it once).
    fn start(config: &Config, loads: &[f64], known: Option<Capacity>) -> Result<SweepRun, ConfigError> {
        load_check(loads)?;
        if config.load.mode == LoadMode::Burst {
            return Err(ConfigError::new("load.mode", "a sweep runs over offered load: use \"open\" or \"closed\""));
        }
        #[cfg(feature = "traffic")]
        if config.load.traffic.is_some() {
            return Err(ConfigError::new(
                "load.traffic",
                "a sweep runs at one steady offered load per point: remove the traffic curve",
            ));
        }
        let mut probe = config.clone();
        probe.load = LoadConfig { offered_load: Some(1.0), rate_rps: None, users: None, ..config.load.clone() };
        let (base, capacity) = match known {
            Some(capacity) => (Scenario::resolve(&probe, &capacity)?, capacity),
            None => capacity::prepare(&probe)?,
        };
        let limits = limits::limits(&base);
        Ok(SweepRun {
            // As many as an overloaded point's requests draw, most of the time.
            #[cfg(feature = "replay")]
            draws: Arc::new(Draws::new(&base, base.requests as usize * 5 / 4)),
            base,
            mode: config.load.mode,
            capacity,
            loads: loads.to_vec(),
            outcomes: Vec::new(),
            limits,
            current: None,
        })
    }

    /// Runs the next load point (the rest of it, if [`SweepRun::advance`] began it); returns
    /// whether any remain.
    pub fn step(&mut self) -> Result<bool, ConfigError> {
        self.advance(u64::MAX)
    }

    /// Runs load point `i` on its own and returns its outcome, without keeping it (`None` past
    /// the last point). Each point is a whole run with its own random streams, so points may run
    /// in any order, or at once on several threads ([`sweep_by`]).
    pub fn point(&self, i: usize) -> Result<Option<Outcome>, ConfigError> {
        let Some(sim) = self.simulation(i) else { return Ok(None) };
        Ok(Some(sim.run()?.with_capacity(&self.capacity)))
    }

    /// Runs at most `steps` engine steps of the next load point (a point is thousands), keeping
    /// its outcome once it is done; returns whether any work remains. A page's slices stay short
    /// on a slow machine this way, where a whole point could take tens of milliseconds. The
    /// outcomes are [`SweepRun::step`]'s exactly: a run stepped in parts is the same run.
    pub fn advance(&mut self, steps: u64) -> Result<bool, ConfigError> {
        let sim = match &mut self.current {
            Some(sim) => sim,
            None => match self.simulation(self.outcomes.len()) {
                Some(sim) => self.current.insert(Box::new(sim)),
                None => return Ok(false),
            },
        };
        if (0..steps).all(|_| sim.step()) {
            return Ok(true);
        }
        let sim = self.current.take().expect("the point just stepped");
        self.outcomes.push(sim.finish()?.with_capacity(&self.capacity));
        Ok(!self.is_done())
    }

    /// Load point `i`'s run, not started (`None` past the last point).
    fn simulation(&self, i: usize) -> Option<Simulation> {
        let &load = self.loads.get(i)?;
        // `new` refuses a burst; a sweep has no offered load to give it.
        let scenario = self.base.at_offered_load(load, &self.capacity)?;
        Some(Simulation::replaying(&scenario, Options::default(), self.draws()))
    }

    /// Whether every load point has run.
    pub fn is_done(&self) -> bool {
        self.outcomes.len() == self.loads.len()
    }

    /// The sizes and gaps its points replay (with the `replay` feature): a run of the same
    /// config at another load may replay them too ([`Simulation::replaying`]).
    pub fn draws(&self) -> Option<&Arc<Draws>> {
        #[cfg(feature = "replay")]
        return Some(&self.draws);
        #[cfg(not(feature = "replay"))]
        None
    }

    /// The measured capacity.
    pub fn capacity(&self) -> Capacity {
        self.capacity
    }

    /// The loads asked for.
    pub fn loads(&self) -> &[f64] {
        &self.loads
    }

    /// The outcomes of the points run so far, in load order.
    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// The sweep so far, judged under `slo`, with the knee by `rule` (at attainment `target`).
    pub fn assemble(&self, slo: Slo, rule: KneeRule, target: f64) -> Sweep {
        let runs = Runs {
            mode: self.mode,
            capacity: self.capacity,
            limits: self.limits,
            loads: &self.loads,
            outcomes: &self.outcomes,
        };
        assemble(&runs, slo, rule, target)
    }
}

/// Runs `config` at every offered load in `loads` (its own load's mode and think time kept) and
/// finds the knee and saturation point.
///
/// A closed loop's "offered load" x means `N = x C (Z + W0)` users: what they would offer if
/// every answer took the unloaded latency W0. They offer less once the replica slows down, so a
/// closed loop's knee and saturation sit at higher x than an open loop's.
pub fn sweep(config: &Config, loads: &[f64], options: SweepOptions) -> Result<Sweep, ConfigError> {
    sweep_by(config, loads, options, |run| (0..run.loads().len()).map(|i| run.point(i)).collect())
}

/// [`sweep`], with its load points run by `run_points` once the sweep is checked and the
/// capacity measured: it returns every point's outcome in load order, each from
/// [`SweepRun::point`], run one after another (as [`sweep`] does) or at once on several threads
/// (the CLI, with rayon). The outcomes are the same either way, and so is the sweep.
pub fn sweep_by(
    config: &Config,
    loads: &[f64],
    options: SweepOptions,
    run_points: impl FnOnce(&SweepRun) -> Result<Vec<Option<Outcome>>, ConfigError>,
) -> Result<Sweep, ConfigError> {
    check_target(options.attainment_target)?;
    let mut run = SweepRun::new(config, loads)?;
    let outcomes = run_points(&run)?;
    assert_eq!(outcomes.len(), loads.len(), "run_points returns one outcome per load point");
    run.outcomes = outcomes.into_iter().flatten().collect();
    let slo = config.slo.slo();
    Ok(run.assemble(slo, config.slo.knee, options.attainment_target))
}

/// Checks an SLO-attainment target: a fraction above 0 and at most 1.
pub fn check_target(target: f64) -> Result<(), ConfigError> {
    if target.is_finite() && target > 0.0 && target <= 1.0 {
        Ok(())
    } else {
        Err(ConfigError::new("attainment_target", format!("must be a fraction above 0 and at most 1, got {target}")))
    }
}

/// What a sweep ran: its mode, capacity, limits, and the outcome at each load.
#[derive(Clone, Copy, Debug)]
pub struct Runs<'a> {
    /// Open or closed loop.
    pub mode: LoadMode,
    /// The measured capacity.
    pub capacity: Capacity,
    /// The estimated limits.
    pub limits: Limits,
    /// The offered loads.
    pub loads: &'a [f64],
    /// One outcome per load, in the same order.
    pub outcomes: &'a [Outcome],
}

/// Builds a [`Sweep`] from outcomes, judging goodput under `slo` (which may differ from the SLOs
/// the runs were made with: SLOs do not change what the engine does) and the knee by `rule`.
pub fn assemble(runs: &Runs<'_>, slo: Slo, rule: KneeRule, target: f64) -> Sweep {
    let Runs { mode, capacity: cap, limits, loads, outcomes } = *runs;
    let points: Vec<SweepPoint> = loads
        .iter()
        .zip(outcomes)
        .map(|(&load, o)| {
            let mut summary = o.summary.clone();
            let g = o.goodput(slo);
            summary.goodput_rps = g.goodput_rps;
            summary.slo_attainment = g.slo_attainment;
            (summary.slo_ttft_ms, summary.slo_tpot_ms) = slo.ms();
            let offered_rps = match mode {
                // The rate the run actually drew, so throughput is compared with what arrived.
                LoadMode::Open if summary.arrival_rate_rps > 0.0 => summary.arrival_rate_rps,
                LoadMode::Open => summary.offered_rate_rps.unwrap_or(load * cap.rps),
                LoadMode::Closed | LoadMode::Burst => load * cap.rps,
            };
            let p99_within_slo = P99Within::judge(&summary, slo);
            SweepPoint { offered_load: load, offered_rps, summary, p99_within_slo }
        })
        .collect();
    let knee = find_knee(&points, rule, target);
    let p99_crossing = P99Crossing {
        ttft_load: crossing(&points, slo.ttft_s, |s| s.ttft_s.p99),
        tpot_load: crossing(&points, slo.tpot_s, |s| s.tpot_s.p99),
    };
    let max_thr = points.iter().map(|p| p.summary.throughput_rps).fold(0.0, f64::max);
    let saturation = points
        .iter()
        .filter(|p| p.summary.throughput_rps >= 0.97 * max_thr && max_thr > 0.0)
        .map(|p| p.offered_load)
        .fold(None, |m: Option<f64>, l| Some(m.map_or(l, |m| m.min(l))))
        .map(|offered_load| Saturation { offered_load, throughput_rps: max_thr });
    let sizing = saturation.and_then(|sat| {
        let at = points.iter().find(|p| p.offered_load == sat.offered_load)?;
        Some(SizingBasis {
            batch_s: at.summary.batch_s.mean,
            knee_qps: knee.map(|k| k.throughput_rps),
            saturation_qps: sat.throughput_rps,
        })
    });
    Sweep {
        capacity_rps: cap.rps,
        base_latency_s: cap.base_latency_s,
        knee_rule: rule,
        attainment_target: target,
        // DistServe's definition is by attainment whatever the knee is judged on.
        distserve_goodput_rps: find_knee(&points, KneeRule::Attainment, target).map(|k| k.offered_rps),
        points,
        knee,
        saturation,
        p99_crossing,
        limits,
        sizing,
    }
}

/// Points in load order, equal loads in the order given. Sorted by insertion (a sweep has at
/// most [`MAX_LOADS`] points): the standard library's stable sort would be the only one in the
/// page's wasm, about 1.5 KB gzipped.
fn by_load(points: &[SweepPoint]) -> Vec<&SweepPoint> {
    let mut order: Vec<&SweepPoint> = Vec::with_capacity(points.len());
    for p in points {
        let at = order.partition_point(|q| q.offered_load.total_cmp(&p.offered_load).is_le());
        order.insert(at, p);
    }
    order
}

/// The load at which `stat` first exceeds `limit`, interpolated between neighbouring points.
fn crossing(points: &[SweepPoint], limit: f64, stat: impl Fn(&Summary) -> f64) -> Option<f64> {
    let order = by_load(points);
    let first_past = order.iter().position(|p| p.summary.requests_completed > 0 && stat(&p.summary) > limit)?;
    let below = order.get(first_past.checked_sub(1)?)?;
    let above = order[first_past];
    let (x0, y0, x1, y1) = (below.offered_load, stat(&below.summary), above.offered_load, stat(&above.summary));
    if y1 > y0 { Some(x0 + (x1 - x0) * (limit - y0) / (y1 - y0)) } else { Some(x1) }
}

/// The knee: walking up from the lowest load, the last point that still meets the rule (its
/// attainment at `target` or above, or both p99s within the SLOs, as the point judged them). A
/// noisy point meeting it again past the first miss does not move the knee.
pub fn find_knee(points: &[SweepPoint], rule: KneeRule, target: f64) -> Option<Knee> {
    let meets = |p: &SweepPoint| match rule {
        KneeRule::Attainment => p.summary.slo_attainment >= target,
        KneeRule::P99 => p.p99_within_slo.both(),
    };
    by_load(points).iter().take_while(|p| meets(p)).last().map(|p| Knee {
        offered_load: p.offered_load,
        offered_rps: p.offered_rps,
        throughput_rps: p.summary.throughput_rps,
        goodput_rps: p.summary.goodput_rps,
        slo_attainment: p.summary.slo_attainment,
        ttft_p99_s: p.summary.ttft_s.p99,
        tpot_p99_s: p.summary.tpot_s.p99,
    })
}

#[cfg(test)]
mod tests {
    use super::{DEFAULT_ATTAINMENT_TARGET, SweepOptions, SweepRun};
    use crate::config::{Config, LoadConfig, RunConfig, WorkloadConfig, WorkloadPreset};

    #[test]
    fn a_sweep_advanced_a_few_steps_at_a_time_is_the_same_sweep() {
        // Open and closed loops, below and past capacity, a chunked-prefill RAG workload.
        for load in [LoadConfig::open_offered(1.0), LoadConfig::closed(1, 2.0)] {
            let config = Config {
                workload: WorkloadConfig::preset(WorkloadPreset::Rag),
                load,
                run: RunConfig { requests: 400, warmup_requests: Some(40) },
                ..Config::default()
            };
            let loads = [0.3, 0.8, 1.1];
            let whole = super::sweep(&config, &loads, SweepOptions::default()).unwrap();
            let mut run = SweepRun::new(&config, &loads).unwrap();
            let mut calls = 1;
            while run.advance(97).unwrap() {
                calls += 1;
            }
            assert!(calls > 5 * loads.len(), "a point takes several slices ({calls} calls in all)");
            assert!(run.is_done() && !run.advance(97).unwrap());
            let sliced = run.assemble(config.slo.slo(), config.slo.knee, DEFAULT_ATTAINMENT_TARGET);
            // Debug prints every float exactly (and a NaN as itself, which == would not match).
            assert_eq!(format!("{sliced:?}"), format!("{whole:?}"), "{:?}", config.load.mode);
        }
    }

    #[test]
    fn the_default_loads_are_a_grid_from_5_to_120_percent() {
        let loads = super::default_loads();
        assert_eq!(loads.len(), 24);
        assert_eq!((loads[0], loads[23]), (0.05, 1.2));
        assert!(loads.windows(2).all(|w| (w[1] - w[0] - 0.05).abs() < 1e-12));
        let written: Vec<f64> = super::DEFAULT_LOADS.split(':').map(|x| x.parse().unwrap()).collect();
        assert_eq!(written, super::DEFAULT_GRID);
        // The grid passes the checks it skips.
        let [from, to, step] = super::DEFAULT_GRID;
        assert_eq!(super::load_grid(from, to, step).unwrap(), loads);
    }

    #[test]
    fn points_go_in_load_order_and_equal_loads_keep_theirs() {
        let point = |offered_load: f64, offered_rps: f64| super::SweepPoint {
            offered_load,
            offered_rps,
            summary: Default::default(),
            p99_within_slo: Default::default(),
        };
        let loads =
            [(0.9, 0.0), (0.5, 1.0), (f64::NAN, 2.0), (0.5, 3.0), (0.1, 4.0), (0.9, 5.0), (-0.0, 6.0), (0.0, 7.0)];
        let points: Vec<super::SweepPoint> = loads.iter().map(|&(l, r)| point(l, r)).collect();
        let order: Vec<f64> = super::by_load(&points).iter().map(|p| p.offered_rps).collect();
        // What the standard library's stable sort gives.
        let mut stable: Vec<&super::SweepPoint> = points.iter().collect();
        stable.sort_by(|a, b| a.offered_load.total_cmp(&b.offered_load));
        assert_eq!(order, stable.iter().map(|p| p.offered_rps).collect::<Vec<_>>());
        assert_eq!(order, [6.0, 7.0, 4.0, 1.0, 3.0, 0.0, 5.0, 2.0]);
    }
}

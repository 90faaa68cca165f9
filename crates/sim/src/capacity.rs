//! The replica's capacity: its saturation throughput for a given engine, cost model and
//! workload, measured by the engine itself.
//!
//! Offered load 1.0 is knife-edge (a 1% error in capacity moves TTFT p99 there by more than
//! 1.5x), so the measurement is careful: a closed loop of 4 x `max_num_seqs` users with no think
//! time keeps the batch full and a queue behind it; every completion between the `n / 10`-th and
//! the `n`-th is counted over the time between them, after the initial backlog has formed. `n` is
//! [`CAPACITY_REQUESTS`], or a share of a longer run's own requests ([`completions`]).

use crate::config::{Config, ThinkDist};
use crate::error::ConfigError;
use crate::scenario::{Capacity, Load, Scenario, saturating_load};
use crate::simulation::{Options, Simulation, Stop};

/// Completions the capacity measurement runs to, at the least.
pub const CAPACITY_REQUESTS: u64 = 20_000;
/// Requests of the unloaded-latency measurement.
pub const BASE_LATENCY_REQUESTS: u64 = 1_000;

/// Completions `base`'s capacity is measured over: [`CAPACITY_REQUESTS`], or two fifths of the
/// run's requests if that is more. A long run is for steady tails, and its offered load is only as
/// steady as the capacity it is a fraction of: over 20,000 completions a chat replica's capacity
/// moves 1.6% with the seed, which moves TTFT p99 at 85% by a third even over a million requests.
/// Runs of up to 50,000 requests (every lab's) measure as before.
pub fn completions(base: &Scenario) -> u64 {
    CAPACITY_REQUESTS.max(base.requests / 5 * 2)
}

/// Validates `config`, measures its replica's capacity (once) and resolves its load, which may
/// be a fraction of that capacity. Deterministic for a seed.
pub fn prepare(config: &Config) -> Result<(Scenario, Capacity), ConfigError> {
    let capacity = measure(&Scenario::saturated(config)?);
    Ok((Scenario::resolve(config, &capacity)?, capacity))
}

/// Validates `config` and resolves it, measuring the capacity only when its load is a fraction
/// of it; [`prepare`] keeps the capacity too.
pub fn prepare_scenario(config: &Config) -> Result<Scenario, ConfigError> {
    match config.load.offered_load {
        Some(_) => prepare(config).map(|(scenario, _)| scenario),
        None => Scenario::new(config),
    }
}

/// Measures the capacity and the unloaded latency of `base`'s engine and workload (its load is
/// ignored). Deterministic for a seed.
pub fn measure(base: &Scenario) -> Capacity {
    let mut m = Measurement::new(base);
    loop {
        if let Some(c) = m.advance(u64::MAX) {
            return c;
        }
    }
}

/// [`measure`], a slice at a time, so a page can answer input in between: the same steps in the
/// same order, so the same capacity.
#[derive(Clone, Debug)]
pub struct Measurement {
    base: Scenario,
    /// The saturated loop, then the unloaded-latency run (`None` once done).
    sim: Option<Simulation>,
    window: Window,
    /// The saturation throughput, counted, and its window, once the saturated loop is done;
    /// then `sim` is the unloaded-latency run.
    saturation: Option<(f64, u64, f64)>,
}

impl Measurement {
    /// Starts measuring `base`'s capacity.
    pub fn new(base: &Scenario) -> Self {
        let n = completions(base);
        Measurement { base: base.clone(), sim: Some(saturated(base, n)), window: Window::new(n), saturation: None }
    }

    /// Runs up to `steps` engine steps; the capacity once it is measured.
    pub fn advance(&mut self, steps: u64) -> Option<Capacity> {
        let mut left = steps;
        if self.saturation.is_none() {
            let sim = self.sim.as_mut()?;
            loop {
                if left == 0 {
                    return None;
                }
                left -= 1;
                if !self.window.step(sim) {
                    break;
                }
            }
            self.saturation = Some(self.window.rate(sim));
            self.sim = Some(unloaded(&self.base));
        }
        let sim = self.sim.as_mut()?;
        while left > 0 && sim.step() {
            left -= 1;
        }
        if !sim.is_finished() {
            return None;
        }
        let base_latency_s = match self.sim.take()?.finish() {
            Ok(outcome) => outcome.summary.e2e_s.mean,
            Err(_) => f64::NAN,
        };
        let (rps, completions_counted, window_s) = self.saturation.expect("the saturated loop has run");
        Some(Capacity { rps, base_latency_s, completions_counted, window_s })
    }
}

/// Saturation throughput counted between the `n/10`-th and the `n`-th completion of a saturated
/// closed loop; returns (requests/s, completions counted, window).
pub fn saturation(base: &Scenario, n: u64) -> (f64, u64, f64) {
    let mut sim = saturated(base, n);
    let mut window = Window::new(n);
    while window.step(&mut sim) {}
    window.rate(&sim)
}

/// Where a saturated loop's counting window opens: the `n/10`-th completion, once the initial
/// backlog has formed.
#[derive(Clone, Copy, Debug)]
struct Window {
    skip: u64,
    /// Completions and time when the window opened.
    mark: Option<(u64, f64)>,
}

impl Window {
    fn new(n: u64) -> Self {
        Window { skip: (n / 10).max(1), mark: None }
    }

    /// Runs one step of `sim`; returns whether there is more to do.
    fn step(&mut self, sim: &mut Simulation) -> bool {
        let more = sim.step();
        let done = sim.completed();
        // The step that meets the stop rule counts; one a work cap stopped does not.
        if (more || sim.is_done()) && self.mark.is_none() && done >= self.skip {
            self.mark = Some((done, sim.now_s()));
        }
        more
    }

    /// (requests/s, completions counted, window) from the window's opening to now.
    fn rate(&self, sim: &Simulation) -> (f64, u64, f64) {
        let (c0, t0) = self.mark.unwrap_or((0, 0.0));
        let (counted, window) = (sim.completed() - c0, sim.now_s() - t0);
        if counted > 0 && window > 0.0 { (counted as f64 / window, counted, window) } else { (0.0, 0, 0.0) }
    }
}

/// `base`'s replica under the saturating load, stopped after `n` completions.
fn saturated(base: &Scenario, n: u64) -> Simulation {
    let scenario = base.with_load(saturating_load(&base.engine));
    Simulation::new(&scenario, Options { stop: Stop::Saturated { completions: n }, ..Options::default() })
}

/// Requests served one at a time: the unloaded-latency run.
fn unloaded(base: &Scenario) -> Simulation {
    let mut scenario = base.with_load(Load::Closed { users: 1, think_s: 0.0, think: ThinkDist::Fixed });
    scenario.requests = BASE_LATENCY_REQUESTS;
    scenario.warmup = 0;
    Simulation::new(&scenario, Options::default())
}

/// Mean E2E latency of requests served one at a time.
pub fn base_latency(base: &Scenario) -> f64 {
    match unloaded(base).run() {
        Ok(outcome) => outcome.summary.e2e_s.mean,
        Err(_) => f64::NAN,
    }
}

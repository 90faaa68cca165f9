//! The event loop: arrivals join the queue, the engine runs steps back to back while there is
//! work, and finished requests are recorded.
//!
//! Speed comes from one observation: between the events that change a batch (an admission, a
//! completion, a prefill chunk, a KV block that might not fit, an arrival that could be
//! admitted), consecutive decode steps have the same composition and only their context grows,
//! by one token per sequence per step. Their times form an arithmetic series, so `k` of them are
//! advanced in one exact jump, and their inter-token gaps go into the histogram as a ramp.

use crate::batch::{Batch, Request, StepPlan};
use crate::config::ThinkDist;
use crate::cost::Frontend;
use crate::dist::TokenDist;
use crate::error::ConfigError;
use crate::event::{Arrival, EventQueue, OPEN_LOOP};
use crate::recorder::{MAX_TRACED_SEATS, MAX_TRACED_STEPS, Recorder, Seat, Snapshot, StepWindow, Trace};
use crate::sampling::{Gamma, Stream};
use crate::scenario::{Load, Scenario};
use crate::summary::Outcome;
use crate::traffic::Traffic;
use std::sync::Arc;

/// What to record beyond the summary, and how much work a run may do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Keep the queue's time series (`num_requests_running`, `num_requests_waiting`).
    pub series: bool,
    /// Trace the tokens of this many measured requests, consecutive by arrival.
    pub trace_requests: u32,
    /// Measured requests to pass over before tracing starts (0: trace the first ones).
    pub trace_from: u32,
    /// Take a [`Snapshot`] of the first step that carries a prefill chunk once this many
    /// requests have arrived (`None`: none; a build without the `steps` feature takes none)...
    pub snapshot_after: Option<u64>,
    /// ...and has at least this many requests waiting.
    pub snapshot_min_waiting: u32,
    /// Record every engine iteration of a window of the run (`None`: none, and the loop pays
    /// one branch a step; a build without the `steps` feature records none). The run itself is
    /// the same either way, bit for bit.
    pub step_trace: Option<StepWindow>,
    /// Work budget in request-visits (see [`MAX_WORK`]); a run that needs more stops with
    /// `truncated: true`.
    pub max_work: u64,
    /// The most requests in the system at once; past it the run stops with `truncated: true`.
    pub max_in_system: usize,
    /// Advance decoding requests together, lazily (a step costs O(what changes)). `false` forms
    /// every step request by request, as the engine did before the cohort: the same results,
    /// bit for bit, more slowly (`tests/cohort.rs` compares the two).
    pub cohort: bool,
    /// When the run ends by itself, and which of its requests are measured.
    pub stop: Stop,
}

/// A simulation's stop rule: when it ends by itself (a work cap or a failure can end it sooner),
/// and which of its requests the recorder measures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Stop {
    /// A run: the scenario's requests after its warm-up are measured, and it ends when the last
    /// of them finishes.
    #[default]
    Measured,
    /// A saturation measurement: it ends once `completions` requests have finished, and
    /// measures none (the measurement counts completions itself).
    Saturated {
        /// Requests to finish, of any kind.
        completions: u64,
    },
    /// A fleet's replica: it never ends by itself, and measures every request (its router
    /// advances it and reads what finished).
    Never,
}

/// The arrival indices a stop rule measures: `from` on, `count` of them (all for `None`).
#[derive(Clone, Copy, Debug)]
struct MeasuredIds {
    from: u64,
    count: Option<u64>,
}

impl MeasuredIds {
    #[inline]
    fn contains(self, id: u64) -> bool {
        id >= self.from && self.count.is_none_or(|n| id - self.from < n)
    }
}

impl Stop {
    fn measured_ids(self, scenario: &Scenario) -> Option<MeasuredIds> {
        match self {
            Stop::Measured => {
                Some(MeasuredIds { from: scenario.warmup, count: Some(scenario.requests - scenario.warmup) })
            }
            Stop::Saturated { .. } => None,
            Stop::Never => Some(MeasuredIds { from: 0, count: None }),
        }
    }
}

/// Default work budget, in request-visits of a step: about a second of simulation natively.
pub const MAX_WORK: u64 = 150_000_000;
/// What one step costs beyond visiting its requests, in the same units.
const STEP_WORK: u64 = 16;
/// Waiting requests whose waits a [`Snapshot`] lists (the queue's length is whole).
const WAITING_SHOWN: usize = 64;
/// Default cap on requests in the system at once.
pub const MAX_IN_SYSTEM: usize = 1_000_000;

impl Default for Options {
    fn default() -> Self {
        Options {
            series: false,
            trace_requests: 0,
            trace_from: 0,
            snapshot_after: None,
            snapshot_min_waiting: 0,
            step_trace: None,
            max_work: MAX_WORK,
            max_in_system: MAX_IN_SYSTEM,
            cohort: true,
            stop: Stop::Measured,
        }
    }
}

/// Independent seeded streams, so request `i` has the same size at every load and in both load
/// modes (common random numbers), whatever the gaps and think times do.
#[derive(Clone, Debug)]
struct Streams {
    sizes: Stream,
    gaps: Stream,
    think: Stream,
    /// Sizes and gaps drawn before, replayed first (the two streams then go on after them).
    #[cfg(feature = "replay")]
    replay: Option<Arc<Draws>>,
    /// Gaps drawn so far (the index of the next one in `replay`).
    #[cfg(feature = "replay")]
    gapped: usize,
}

impl Streams {
    fn new(seed: u64) -> Self {
        // One seeding, called three times: it is long, and the page's wasm carries it once.
        #[inline(never)]
        fn stream(seed: u64, k: u64) -> Stream {
            Stream::new(splitmix64(seed ^ splitmix64(k)))
        }
        Streams {
            sizes: stream(seed, 1),
            gaps: stream(seed, 2),
            think: stream(seed, 3),
            #[cfg(feature = "replay")]
            replay: None,
            #[cfg(feature = "replay")]
            gapped: 0,
        }
    }

    /// Request `id`'s prompt and output lengths (drawn in arrival order).
    #[inline]
    fn lengths(&mut self, sc: &Scenario, id: u64) -> (u32, u32) {
        #[cfg(feature = "replay")]
        if let Some(&lengths) = self.replay.as_ref().and_then(|d| d.sizes.get(id as usize)) {
            return lengths;
        }
        let _ = id;
        draw_lengths(sc, &mut self.sizes)
    }

    /// The next gap of mean 1 (an open loop without a traffic curve).
    #[inline]
    fn unit_gap(&mut self, gamma: Option<&Gamma>) -> f64 {
        #[cfg(feature = "replay")]
        {
            let i = self.gapped;
            self.gapped += 1;
            if let Some(&unit) = self.replay.as_ref().and_then(|d| d.gaps.get(i)) {
                return unit;
            }
        }
        draw_unit_gap(&mut self.gaps, gamma)
    }
}

/// The random draws that do not depend on the load, made once for runs that differ only in it:
/// the first requests' sizes and an open loop's first gaps (of mean 1, which a run scales by its
/// rate). The points of a sweep, and a lab's slider runs, use the same seed at every load (common
/// random numbers), so each would draw these again, and drawing them (a logarithm, an
/// exponential, a sine and cosine a request) is about a fifth of a RAG run. A run that replays
/// them is the same as one that draws them, bit for bit: past the last one it draws on from where
/// they left the streams.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "replay"), allow(dead_code, reason = "a build without replay makes none"))]
pub struct Draws {
    seed: u64,
    prompt: TokenDist,
    output: TokenDist,
    /// The gaps' gamma shape (1: exponential).
    burstiness: f64,
    sizes: Vec<(u32, u32)>,
    gaps: Vec<f64>,
    /// The streams after them.
    after: Streams,
}

impl Draws {
    /// The first `n` requests' sizes and, for an open loop without a traffic curve, its first
    /// `n` gaps, under `scenario`'s seed and workload.
    pub fn new(scenario: &Scenario, n: usize) -> Draws {
        let mut after = Streams::new(scenario.seed);
        let burstiness = burstiness(scenario);
        let open = matches!(scenario.load, Load::Open { .. }) && scenario.traffic().is_none();
        let gamma = gap_gamma(burstiness);
        let (mut sizes, mut gaps) = (Vec::with_capacity(n), Vec::with_capacity(if open { n } else { 0 }));
        for _ in 0..n {
            sizes.push(draw_lengths(scenario, &mut after.sizes));
            if open {
                gaps.push(draw_unit_gap(&mut after.gaps, gamma.as_ref()));
            }
        }
        let (prompt, output) = (scenario.prompt.clone(), scenario.output.clone());
        Draws { seed: scenario.seed, prompt, output, burstiness, sizes, gaps, after }
    }

    /// Whether a run of `scenario` draws these (its seed, workload and gaps are theirs); never
    /// without the `replay` feature.
    pub fn fit(&self, scenario: &Scenario) -> bool {
        cfg!(feature = "replay")
            && scenario.seed == self.seed
            && scenario.prompt == self.prompt
            && scenario.output == self.output
            && scenario.traffic().is_none()
            && (self.gaps.is_empty()
                || !matches!(scenario.load, Load::Open { .. })
                || burstiness(scenario) == self.burstiness)
    }
}

/// An open loop's gamma shape (1, exponential gaps, for any other load).
fn burstiness(scenario: &Scenario) -> f64 {
    match scenario.load {
        Load::Open { burstiness, .. } => burstiness,
        _ => 1.0,
    }
}

/// Gamma gaps with shape `burstiness` and mean 1 (`None`: exponential).
pub(crate) fn gap_gamma(burstiness: f64) -> Option<Gamma> {
    if burstiness != 1.0 { Gamma::new(burstiness, 1.0 / burstiness) } else { None }
}

pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    Running,
    Done,
    Truncated,
    Failed(ConfigError),
}

/// One replica under one load, advanced step by step.
///
/// ```
/// use kneelab_sim::{Config, LoadConfig, Scenario, Simulation};
/// let config = Config { load: LoadConfig::open_rate(2.0), ..Config::default() };
/// let mut sim = Simulation::new(&Scenario::new(&config).unwrap(), Default::default());
/// while sim.step() {}
/// assert!(sim.now_s() > 0.0);
/// ```
#[derive(Clone, Debug)]
pub struct Simulation {
    scenario: Scenario,
    options: Options,
    now_s: f64,
    events: EventQueue,
    streams: Streams,
    gamma_gaps: Option<Gamma>,
    batch: Batch,
    plan: StepPlan,
    recorder: Recorder,
    /// The arrivals the stop rule measures (`None`: none).
    measured_ids: Option<MeasuredIds>,
    /// Arrival index of the first traced request.
    first_traced: u64,
    arrived: u64,
    completed: u64,
    tokens_emitted: u64,
    measured_done: u64,
    work: u64,
    steps: u64,
    state: State,
    /// Requests finishing in the step just run, as `(seq, slot)` (kept to reuse its buffer).
    finishing: Vec<(u64, u32)>,
    /// Fed by a router ([`Simulation::routed`]): arrivals come only from [`Simulation::push_arrival`].
    routed: bool,
    /// No decode jump ends later than the first step ending at or after this time (a fleet's
    /// next event), so a router sees the replica as it is then.
    horizon_s: f64,
    /// Requests finished since the last [`Simulation::take_finished`] (routed replicas only).
    finished_log: Vec<Finished>,
    /// While a step trace is asked for: arrivals not yet given to a traced step.
    arrivals: Vec<(u64, f64)>,
    /// Whether the step being finished is traced (its completions are recorded).
    tracing: bool,
    /// Requests preempted since the run began (warm-up included).
    preempted_total: u64,
    /// When the last step (or jump) started.
    last_start_s: f64,
    /// The cost model's compute time of the last step with each token count modulo
    /// [`COMPUTE_MEMO`], as `(tokens, seconds)`: most steps repeat a count (a decode-only batch,
    /// a full token budget), and the square root it saves was a twentieth of a run.
    compute_memo: Box<[(u64, f64); COMPUTE_MEMO]>,
}

/// Slots of [`Simulation`]'s compute-time memo.
const COMPUTE_MEMO: usize = 256;

/// A request a routed replica finished: what a fleet needs to judge it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finished {
    /// When it arrived.
    pub arrival_s: f64,
    /// When its last token came.
    pub end_s: f64,
    /// Time to first token.
    pub ttft_s: f64,
    /// Time per output token after the first (0 for a one-token answer).
    pub tpot_s: f64,
}

impl Simulation {
    /// A simulation at time 0 with the first arrivals scheduled (none for a [`Load::Routed`]
    /// scenario, which [`Simulation::routed`] runs).
    pub fn new(scenario: &Scenario, options: Options) -> Self {
        Simulation::start(scenario, options, false, None)
    }

    /// A replica of a fleet, from a [`Scenario::routed`] (its load is [`Load::Routed`]): no
    /// arrivals of its own, every request measured, and the run never ends by itself
    /// ([`Stop::Never`]); a router hands it requests with [`Simulation::push_arrival`] and reads
    /// what finished with [`Simulation::take_finished`].
    ///
    /// A constructor of its own, not a test of the load in [`Simulation::new`], so a build that
    /// runs no fleet (the page's first module) compiles the routed paths out.
    pub fn routed(scenario: &Scenario, options: Options) -> Self {
        debug_assert_eq!(scenario.load, Load::Routed, "a routed replica's scenario comes from Scenario::routed");
        Simulation::start(scenario, Options { stop: Stop::Never, ..options }, true, None)
    }

    /// [`Simulation::new`], replaying `draws` if given (made for the same seed and workload, at
    /// any load) instead of drawing them again: the same run, bit for bit, with less to draw.
    /// Draws that do not [`fit`](Draws::fit) the scenario are not used.
    pub fn replaying(scenario: &Scenario, options: Options, draws: Option<&Arc<Draws>>) -> Self {
        Simulation::start(scenario, options, false, draws.filter(|d| d.fit(scenario)))
    }

    fn start(scenario: &Scenario, options: Options, routed: bool, draws: Option<&Arc<Draws>>) -> Self {
        let mut streams = match draws {
            #[cfg(feature = "replay")]
            Some(d) => Streams { replay: Some(Arc::clone(d)), ..d.after.clone() },
            _ => Streams::new(scenario.seed),
        };
        let mut events = EventQueue::default();
        // Gamma gaps with shape k and mean 1, scaled by 1 / rate when drawn.
        let gamma_gaps = if routed { None } else { gap_gamma(burstiness(scenario)) };
        match scenario.load {
            _ if routed => {}
            Load::Routed => {}
            Load::Open { rate_rps, .. } => {
                if let Some(time_s) = next_open(&mut streams, gamma_gaps.as_ref(), rate_rps, scenario.traffic(), 0.0) {
                    events.push(Arrival { time_s, user: OPEN_LOOP });
                }
            }
            Load::Burst { concurrency } => {
                // One open-ended chain of arrivals at time 0, or one chain per seat.
                let seats = concurrency.map_or(1, |c| u64::from(c).min(scenario.requests));
                for user in 0..seats {
                    events.push(Arrival {
                        time_s: 0.0,
                        user: if concurrency.is_some() { user as u32 } else { OPEN_LOOP },
                    });
                }
            }
            Load::Closed { users, think_s, think } => {
                for user in 0..users {
                    // Start each user partway through a think, as if the loop had been running.
                    let first = match think {
                        ThinkDist::Exponential => think_s * streams.think.exp1(),
                        ThinkDist::Fixed => think_s * streams.think.uniform(),
                    };
                    events.push(Arrival { time_s: first, user });
                }
            }
        }
        let measured_ids = options.stop.measured_ids(scenario);
        let measured = measured_ids.and_then(|m| m.count).map_or(0, |n| n as usize);
        let recorder = Recorder::new(options.series, options.trace_requests as usize, measured);
        Simulation {
            batch: Batch::new(scenario.engine),
            scenario: scenario.clone(),
            options,
            now_s: 0.0,
            events,
            streams,
            gamma_gaps,
            plan: StepPlan::default(),
            recorder,
            measured_ids,
            first_traced: measured_ids.map_or(0, |m| m.from) + u64::from(options.trace_from),
            arrived: 0,
            completed: 0,
            tokens_emitted: 0,
            measured_done: 0,
            work: 0,
            steps: 0,
            state: State::Running,
            finishing: Vec::new(),
            routed,
            horizon_s: f64::INFINITY,
            finished_log: Vec::new(),
            arrivals: Vec::new(),
            tracing: false,
            preempted_total: 0,
            last_start_s: 0.0,
            compute_memo: Box::new([(u64::MAX, 0.0); COMPUTE_MEMO]),
        }
    }

    /// Hands a routed replica a request arriving at `time_s` (at or after the last one).
    pub fn push_arrival(&mut self, time_s: f64) {
        self.events.push(Arrival { time_s, user: OPEN_LOOP });
    }

    /// Sets the time no decode jump may run past (see the field); the jumps stay exact.
    pub fn set_horizon(&mut self, t_s: f64) {
        self.horizon_s = t_s;
    }

    /// Moves the requests finished since the last call into `out` (routed replicas only).
    pub fn take_finished(&mut self, out: &mut Vec<Finished>) {
        out.append(&mut self.finished_log);
    }

    /// Simulated time now.
    pub fn now_s(&self) -> f64 {
        self.now_s
    }

    /// Requests that have arrived so far (warm-up and extra requests included).
    pub fn arrived(&self) -> u64 {
        self.arrived
    }

    /// Requests that have finished so far (all of them, measured or not).
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// Requests running and waiting now.
    pub fn in_flight(&self) -> u64 {
        self.batch.in_system() as u64
    }

    /// `num_requests_running` now.
    pub fn num_requests_running(&self) -> usize {
        self.batch.num_running()
    }

    /// `num_requests_waiting` now.
    pub fn num_requests_waiting(&self) -> usize {
        self.batch.num_waiting()
    }

    /// Engine steps so far (a jump over `k` identical decode steps counts `k`).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// `vllm:kv_cache_usage_perc` now: the fraction of KV cache blocks in use.
    pub fn kv_cache_usage(&self) -> f64 {
        self.batch.kv_used() as f64 / self.scenario.engine.kv_blocks as f64
    }

    /// Requests preempted since the run began, warm-up included (the recorder counts the
    /// measured window's only).
    pub fn preempted_total(&self) -> u64 {
        self.preempted_total
    }

    /// When the last step (or jump over identical decode steps) started; it ended at
    /// [`Simulation::now_s`].
    pub fn last_start_s(&self) -> f64 {
        self.last_start_s
    }

    /// What has been recorded so far (measured requests only: those after the warm-up).
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// Whether the run has stopped (finished, truncated or failed).
    pub fn is_finished(&self) -> bool {
        self.state != State::Running
    }

    /// Whether the run ended by its stop rule (not by a work cap or a failure).
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Whether a work cap stopped the run early (what [`Simulation::finish`] marks `truncated`).
    pub fn is_truncated(&self) -> bool {
        self.state == State::Truncated
    }

    /// The error that stopped the run, if one did (a request that can never fit the KV cache).
    pub fn error(&self) -> Option<&ConfigError> {
        match &self.state {
            State::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Runs one engine step (or one jump over identical decode steps), with the arrivals due
    /// before it ends. Returns whether there is more to do.
    pub fn step(&mut self) -> bool {
        if self.state != State::Running {
            return false;
        }
        self.admit_arrivals(self.now_s);
        if self.batch.in_system() == 0 {
            // Idle: the next arrival starts a step at once.
            let Some(t) = self.events.peek_time() else {
                // No arrival will ever come (no load model does this): stop, with what finished.
                self.state = State::Truncated;
                return false;
            };
            self.now_s = t;
            self.admit_arrivals(t);
            if self.state != State::Running {
                return false;
            }
        }

        let start = self.now_s;
        self.last_start_s = start;
        self.batch.form_step(start, &mut self.plan);
        self.preempted_total += self.plan.preempted as u64;
        self.recorder.count_preemptions(self.plan.preempted as u64);
        self.record_gauges(start);
        if self.plan.seqs() == 0 {
            // Validation makes every request fit an empty engine, so this cannot happen; stop
            // rather than spin if it ever does.
            self.state = State::Failed(ConfigError::new("", "the engine could not schedule any request"));
            return false;
        }
        if cfg!(feature = "steps")
            && !self.recorder.has_snapshot()
            && self.options.snapshot_after.is_some_and(|k| self.arrived > k)
            && self.batch.num_waiting() >= self.options.snapshot_min_waiting as usize
        {
            let snapshot = self.snapshot(start);
            self.recorder.keep_snapshot(snapshot);
        }
        let jump = self.plan_jump(start);
        let (k, end) = (jump.steps, start + jump_s(jump.steps, jump.first_s, jump.growth_s));
        let traced_from = self.recorder.traced_steps();
        if let Some(window) = self.step_window() {
            // A jump that reaches past the window's start is traced, then its steps before it
            // are dropped (`Recorder::untrace_before`), so a window opens at the first step at or after it.
            self.tracing = self.arrived > window.after_arrivals
                && end > window.after_s
                && traced_from < (window.steps as usize).min(MAX_TRACED_STEPS)
                && self.recorder.traced_seats() < MAX_TRACED_SEATS;
            if self.tracing {
                self.trace_step(start, jump, window);
            } else {
                self.arrivals.clear();
            }
        }
        // A step's cost: a pass over its requests, plus a fixed overhead (arrivals, bookkeeping).
        self.work += self.plan.seqs() + STEP_WORK;
        self.steps += k;
        if self.recorder.in_window() {
            self.recorder.steps(self.plan.pure_decode, k, end - start);
        }
        // Arrivals during the step join the queue at their own times; none can join this step.
        self.admit_arrivals(end);
        self.finish_step(start, end, jump);
        if self.tracing {
            self.trace_arrivals(traced_from);
            if let Some(window) = self.step_window()
                && start < window.after_s
            {
                self.recorder.untrace_before(traced_from, window.after_s);
            }
            self.tracing = false;
        }
        self.now_s = end;
        if self.state == State::Running
            && (self.work > self.options.max_work || self.batch.in_system() > self.options.max_in_system)
        {
            self.state = State::Truncated;
        }
        self.state == State::Running
    }

    /// Steps until simulated time reaches `t_s` or the run stops.
    pub fn run_until(&mut self, t_s: f64) {
        while self.now_s < t_s && self.step() {}
    }

    /// Runs every step that starts before `t_s`, as a clock at `t_s` would have seen them
    /// begin: unlike [`Simulation::run_until`], an idle replica whose next arrival comes after
    /// `t_s` stays idle (the step in progress at `t_s` still runs to its end).
    pub fn advance_to(&mut self, t_s: f64) {
        while self.state == State::Running && self.now_s < t_s {
            // Idle until an arrival after `t_s`; a routed replica with none waits for the router.
            let idle = match self.events.peek_time() {
                Some(t) => t > t_s,
                None => self.routed,
            };
            if self.batch.in_system() == 0 && idle {
                break;
            }
            if !self.step() {
                break;
            }
        }
    }

    /// Runs to the end and returns what was recorded.
    pub fn run(mut self) -> Result<Outcome, ConfigError> {
        while self.step() {}
        self.finish()
    }

    /// Stops here and returns what was recorded (a run stopped early is marked truncated).
    pub fn finish(mut self) -> Result<Outcome, ConfigError> {
        if let State::Failed(e) = self.state {
            return Err(e);
        }
        let truncated = self.state != State::Done;
        if truncated || !self.recorder.in_window() {
            // Stopped before the last measured request finished: close the window here (an
            // empty one if no measured request ever arrived).
            if !self.recorder.in_window() {
                self.recorder.start_window(self.now_s);
            }
            self.recorder.end_window(self.now_s);
        }
        Ok(Outcome::new(self.scenario, self.recorder, truncated, self.arrived))
    }

    /// The step just formed, as a [`Snapshot`], if it carries a prefill chunk.
    #[cold]
    #[inline(never)]
    fn snapshot(&self, start: f64) -> Option<Snapshot> {
        let snapshot = self.step_snapshot(start, self.plan_jump_first_s());
        (snapshot.prefill_tokens > 0).then_some(snapshot)
    }

    /// The first step time of the step just formed.
    fn plan_jump_first_s(&self) -> f64 {
        self.scenario.cost.step_s(self.plan.tokens, self.plan.seqs(), self.plan.context)
    }

    /// The step just formed, starting at `start` and lasting `duration_s`.
    fn step_snapshot(&self, start: f64, duration_s: f64) -> Snapshot {
        let b = &self.batch;
        let seats: Vec<Seat> = b
            .running_slots()
            .map(|slot| {
                let r = b.request(slot);
                let (computed, emitted) = b.progress(r);
                let tokens = if r.in_cohort && self.plan.decoders > 0 {
                    1
                } else {
                    self.plan.scheduled.iter().find(|s| s.slot == slot).map_or(0, |s| s.tokens)
                };
                // A decode computes the KV of the one token before the next: a request with more
                // than that to compute is prefilling (its prompt, or a preempted one's recompute).
                let prefill = tokens > 0 && r.prompt + emitted - computed > 1;
                Seat {
                    id: r.id,
                    prompt: r.prompt,
                    output: r.output,
                    emitted,
                    step_tokens: tokens,
                    prefill,
                    arrival_s: r.arrival_s,
                    first_token_s: (emitted > 0).then_some(r.first_token_s),
                }
            })
            .collect();
        let prefill_tokens = seats.iter().filter(|s| s.prefill).map(|s| s.step_tokens).sum();
        let decode_tokens = seats.iter().filter(|s| !s.prefill).map(|s| s.step_tokens).sum();
        let id = |slot: u32| b.request(slot).id;
        let admitted = seats.len() - self.plan.admitted as usize;
        Snapshot {
            t_s: start,
            max_num_seqs: self.scenario.engine.max_num_seqs,
            max_num_batched_tokens: self.scenario.engine.max_num_batched_tokens,
            kv_blocks: self.scenario.engine.kv_blocks,
            kv_blocks_used: b.kv_used(),
            waiting: b.num_waiting() as u32,
            waiting_s: b.waiting_slots().take(WAITING_SHOWN).map(|slot| start - b.request(slot).arrival_s).collect(),
            decode_tokens,
            prefill_tokens,
            index: self.steps,
            duration_s,
            // Admissions are pushed at the back of the running order; preempted requests at the
            // front of the queue.
            admitted: seats[admitted..].iter().map(|s| s.id).collect(),
            preempted: b.waiting_slots().take(self.plan.preempted as usize).map(id).collect(),
            completed: Vec::new(),
            arrived: Vec::new(),
            seats,
        }
    }

    /// Records the step just formed, and each of the identical decode steps a jump stands for
    /// (as far as the window goes).
    #[cold]
    #[inline(never)]
    fn trace_step(&mut self, start: f64, jump: Jump, window: StepWindow) {
        let Jump { steps: k, first_s: d0, growth_s: g } = jump;
        let mut first = self.step_snapshot(start, d0);
        // Who joined the queue since the last step began (all of them are in it by now).
        first.arrived = std::mem::take(&mut self.arrivals);
        // Steps of the jump before the window opens are made, then trimmed: room for them too.
        let early = if start < window.after_s {
            (0..k).take_while(|&j| start + jump_s(j, d0, g) < window.after_s).count()
        } else {
            0
        };
        let room = (window.steps as usize).min(MAX_TRACED_STEPS) - self.recorder.traced_steps() + early;
        let b = &self.batch;
        let block = self.scenario.engine.block_size_tokens;
        let mut steps = Vec::with_capacity(k.min(room as u64) as usize);
        for j in 1..k.min(room as u64) {
            // Step j of the jump: every seat has emitted j more tokens; the cohort's members and
            // the explicit decoders open KV blocks as their contexts cross block boundaries.
            let explicit_blocks: u64 = self
                .plan
                .scheduled
                .iter()
                .map(|s| {
                    let r = b.request(s.slot);
                    u64::from((r.computed + j as u32 + 1).div_ceil(block).saturating_sub(r.blocks))
                })
                .sum();
            let next = Snapshot {
                t_s: start + jump_s(j, d0, g),
                duration_s: d0 + j as f64 * g,
                index: first.index + j,
                kv_blocks_used: first.kv_blocks_used + b.cohort_crossings_after(j + 1) + explicit_blocks,
                seats: first.seats.iter().map(|s| Seat { emitted: s.emitted + j as u32, ..*s }).collect(),
                waiting_s: first.waiting_s.iter().map(|w| w + jump_s(j, d0, g)).collect(),
                admitted: Vec::new(),
                preempted: Vec::new(),
                arrived: Vec::new(),
                ..first.clone()
            };
            steps.push(next);
        }
        steps.insert(0, first);
        self.recorder.trace_steps(&mut steps);
    }

    /// Gives the arrivals during a traced jump to the steps of it they came before, counting
    /// them into those steps' queues (the rest wait for the next step).
    #[cold]
    #[inline(never)]
    fn trace_arrivals(&mut self, from: usize) {
        let steps = self.recorder.traced_from_mut(from);
        let Some(first) = steps.first() else {
            return;
        };
        let (start, waiting, waits) = (first.t_s, first.waiting, first.waiting_s.clone());
        let mut next = 0;
        for step in steps.iter_mut().skip(1) {
            let t = step.t_s;
            let came = next;
            while next < self.arrivals.len() && self.arrivals[next].1 <= t {
                next += 1;
            }
            step.arrived.extend_from_slice(&self.arrivals[came..next]);
            step.waiting = waiting + next as u32;
            // The newcomers wait at the back of the queue, behind those listed.
            step.waiting_s = waits.iter().map(|w| w + (t - start)).collect();
            let room = WAITING_SHOWN.saturating_sub(step.waiting_s.len());
            step.waiting_s.extend(self.arrivals[..next].iter().take(room).map(|&(_, at)| t - at));
        }
        self.arrivals.drain(..next);
    }

    /// The window of steps to trace, if one was asked for: never in a build without the `steps`
    /// feature (a lab's wasm), which saying so here leaves the tracing out of.
    #[inline]
    fn step_window(&self) -> Option<StepWindow> {
        self.options.step_trace.filter(|_| cfg!(feature = "steps"))
    }

    #[inline]
    fn record_gauges(&mut self, t: f64) {
        let (running, waiting) = (self.batch.num_running() as u32, self.batch.num_waiting() as u32);
        self.recorder.gauges(t, running, waiting, self.batch.kv_used());
    }

    /// Moves every arrival due at or before `t` into the waiting queue.
    fn admit_arrivals(&mut self, t: f64) {
        while self.state == State::Running
            && let Some(arrival) = self.events.pop_due(t)
        {
            self.arrive(arrival);
            // Counted as they come, not only between steps: one long step can see millions.
            if self.state == State::Running && self.batch.in_system() > self.options.max_in_system {
                self.state = State::Truncated;
            }
        }
    }

    fn arrive(&mut self, arrival: Arrival) {
        let sc = &self.scenario;
        let id = self.arrived;
        self.arrived += 1;
        let (prompt, output) = self.streams.lengths(sc, id);
        let kv_tokens = prompt as u64 + output as u64 - 1;
        if kv_tokens.div_ceil(sc.engine.block_size_tokens as u64) > sc.engine.kv_blocks {
            self.state = State::Failed(ConfigError::new(
                "engine.kv_cache_tokens",
                format!(
                    "request {id} ({prompt} prompt + {output} output tokens) can never fit a KV cache of {} tokens; \
                     raise it or cap workload.prompt_tokens / workload.output_tokens with \"max\"",
                    sc.engine.kv_blocks * sc.engine.block_size_tokens as u64
                ),
            ));
            return;
        }
        let measured = self.measured_ids.is_some_and(|m| m.contains(id));
        if self.step_window().is_some() {
            self.arrivals.push((id, arrival.time_s));
        }
        if self.measured_ids.is_some_and(|m| m.from == id) {
            self.recorder.start_window(arrival.time_s);
        }
        if measured {
            self.recorder.measured_arrival(arrival.time_s);
        }
        let traced =
            measured && (self.first_traced..self.first_traced + u64::from(self.options.trace_requests)).contains(&id);
        if traced {
            self.recorder.start_trace(Trace {
                id,
                prompt_tokens: prompt,
                output_tokens: output,
                arrival_s: arrival.time_s,
                ..Trace::default()
            });
        }
        self.batch.enqueue(Request {
            id,
            user: arrival.user,
            arrival_s: arrival.time_s,
            prompt,
            output,
            computed: 0,
            emitted: 0,
            blocks: 0,
            first_scheduled_s: f64::NAN,
            first_token_s: f64::NAN,
            last_token_s: f64::NAN,
            measured,
            traced,
            seq: 0,
            running_at: 0,
            in_cohort: false,
            join_d: 0,
        });
        self.record_gauges(arrival.time_s);
        if self.routed {
            return;
        }
        match self.scenario.load {
            Load::Open { rate_rps, .. } => {
                let (streams, gamma, traffic) = (&mut self.streams, self.gamma_gaps.as_ref(), self.scenario.traffic());
                if let Some(time_s) = next_open(streams, gamma, rate_rps, traffic, arrival.time_s) {
                    self.events.push(Arrival { time_s, user: OPEN_LOOP });
                }
            }
            // An unlimited burst: the next request comes at the same instant, until all have.
            Load::Burst { concurrency: None } if self.arrived < self.scenario.requests => {
                self.events.push(Arrival { time_s: arrival.time_s, user: OPEN_LOOP });
            }
            _ => {}
        }
    }

    /// The formed step's time: [`CostModel::step_s`](crate::cost::CostModel::step_s), its
    /// compute time remembered by token count.
    fn step_s(&mut self) -> f64 {
        let (cost, tokens) = (&self.scenario.cost, self.plan.tokens);
        let slot = &mut self.compute_memo[tokens as usize % COMPUTE_MEMO];
        if slot.0 != tokens {
            *slot = (tokens, cost.compute_s(tokens));
        }
        cost.step_s_after(slot.1, self.plan.seqs(), self.plan.context)
    }

    /// How many identical steps the formed step stands for, and their times.
    fn plan_jump(&mut self, start: f64) -> Jump {
        let seqs = self.plan.seqs();
        let d0 = self.step_s();
        if !self.plan.pure_decode {
            return Jump { steps: 1, first_s: d0, growth_s: 0.0 };
        }
        let n = seqs;
        // Every sequence's context grows by one token per step, so each step is longer by this.
        let g = self.scenario.cost.per_context_s() * n as f64;
        // Until the first request emits its last token...
        let explicit = self.plan.scheduled.iter().map(|s| self.batch.request(s.slot).remaining_output()).min();
        let mut k = match (self.batch.next_finish(), explicit) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(1),
        };
        // ...while the KV cache surely holds every block the later steps open (each sequence
        // opens at most ceil((k - 1) / block) blocks in k - 1 more steps)...
        let block = self.scenario.engine.block_size_tokens as u64;
        k = k.min(1 + block * (self.batch.kv_free() / n));
        // ...and until the next arrival, if one could be admitted when it comes.
        let seats_free = self.batch.num_running() < self.scenario.engine.max_num_seqs as usize;
        if seats_free
            && self.batch.num_waiting() == 0
            && let Some(t_arrival) = self.events.peek_time()
        {
            k = k.min(steps_until(start, t_arrival, d0, g, k));
        }
        if self.horizon_s.is_finite() {
            k = k.min(steps_until(start, self.horizon_s, d0, g, k));
        }
        Jump { steps: k.max(1), first_s: d0, growth_s: g }
    }

    fn finish_step(&mut self, start: f64, end: f64, jump: Jump) {
        let emitted_before = self.tokens_emitted;
        let Jump { steps: k, first_s: d0, growth_s: g } = jump;
        let decoders = self.plan.decoders;
        // The cohort: every member emits one token a step, `k` steps, all at once.
        if decoders > 0 {
            self.batch.advance_cohort(k);
            self.tokens_emitted += decoders * k;
            for i in 0..self.batch.cohort_traced().len() {
                let r = self.batch.request(self.batch.cohort_traced()[i]);
                let trace = self.recorder.trace_mut((r.id - self.first_traced) as usize);
                trace.token_times_s.extend((1..=k).map(|j| start + jump_s(j, d0, g)));
            }
        }
        let mut finished = false;
        if k > 1 {
            // Every sequence in a decode run sees the same gaps: d0, d0 + g, ..., d0 + (k-1) g.
            let measured = self.batch.cohort_measured()
                + self.plan.scheduled.iter().filter(|s| self.batch.request(s.slot).measured).count() as u64;
            self.recorder.itl_ramp(d0, g, k, measured);
            for i in 0..self.plan.scheduled.len() {
                let slot = self.plan.scheduled[i].slot;
                finished |= self.batch.decode(slot, k as u32, end);
                self.tokens_emitted += k;
                let r = self.batch.request(slot);
                if r.traced {
                    let trace = self.recorder.trace_mut((r.id - self.first_traced) as usize);
                    trace.token_times_s.extend((1..=k).map(|j| start + jump_s(j, d0, g)));
                }
            }
        } else {
            // Requests that emitted at the end of the previous step (every member, and any
            // decode outside the cohort) all see a gap of this step's length; count them and add
            // them to the histogram at once.
            let mut one_step_gaps = if decoders > 0 { self.batch.cohort_measured() } else { 0 };
            for i in 0..self.plan.scheduled.len() {
                let s = self.plan.scheduled[i];
                let Some(emitted) = self.batch.compute(s.slot, s.tokens, end) else {
                    continue; // a prefill chunk: no token yet
                };
                let r = self.batch.request(s.slot);
                if r.measured
                    && let Some(previous_s) = emitted.previous_token_s
                {
                    if previous_s == start {
                        one_step_gaps += 1;
                    } else {
                        // After a preemption the gap includes the recompute: the stall shows here.
                        self.recorder.itl(end - previous_s, 1);
                    }
                }
                self.tokens_emitted += 1;
                if r.traced {
                    let trace = self.recorder.trace_mut((r.id - self.first_traced) as usize);
                    trace.token_times_s.push(end);
                }
                finished |= emitted.last;
            }
            self.recorder.itl(end - start, one_step_gaps);
        }
        // Whoever now decodes one token a step joins the cohort (if the batch is big enough to
        // gain from it); the rest stay explicit.
        if self.options.cohort {
            self.batch.join_decoders();
        }
        self.recorder.count_tokens(self.tokens_emitted - emitted_before);
        if decoders > 0 {
            self.batch.pop_finished(&mut self.finishing);
        }
        if finished || !self.finishing.is_empty() {
            self.complete_finished(end);
        }
        self.record_gauges(end);
    }

    /// Records and releases every request that has emitted its last token, in running order.
    fn complete_finished(&mut self, end: f64) {
        self.batch.collect_finished(&mut self.finishing);
        let finishing = std::mem::take(&mut self.finishing);
        for &(seq, slot) in &finishing {
            self.batch.leave(seq, slot, end);
            let r = self.batch.request(slot);
            self.completed += 1;
            self.recorder.count_completion();
            let (user, measured, traced) = (r.user, r.measured, r.traced);
            if self.tracing
                && let Some(step) = self.recorder.traced_from_mut(0).last_mut()
            {
                step.completed.push(r.id);
            }
            if measured {
                let ttft = r.first_token_s - r.arrival_s;
                let e2e = end - r.arrival_s;
                let tpot = (r.output > 1).then(|| (e2e - ttft) / (r.output - 1) as f64);
                let queue = r.first_scheduled_s - r.arrival_s;
                let at_length = self.scenario.output.max_tokens().is_some_and(|m| r.output >= m);
                self.recorder.complete(ttft, tpot, e2e, queue, r.prompt, r.output, at_length);
                if self.routed {
                    let f = Finished { arrival_s: r.arrival_s, end_s: end, ttft_s: ttft, tpot_s: tpot.unwrap_or(0.0) };
                    self.finished_log.push(f);
                }
                // With no frontend time the client's view is the server's: not kept twice.
                let front = self.scenario.frontend;
                if front != Frontend::default() {
                    self.recorder.client(front.ttft_s(ttft, r.prompt), front.e2e_s(e2e, r.prompt, r.output));
                }
                if traced {
                    let trace = self.recorder.trace_mut((r.id - self.first_traced) as usize);
                    trace.scheduled_s = r.first_scheduled_s;
                    trace.first_token_s = r.first_token_s;
                    trace.finish_s = end;
                }
            }
            self.batch.release(slot);
            match self.scenario.load {
                _ if self.routed => {}
                Load::Closed { think_s, think, .. } => {
                    let pause = match think {
                        ThinkDist::Exponential => think_s * self.streams.think.exp1(),
                        ThinkDist::Fixed => think_s,
                    };
                    self.events.push(Arrival { time_s: end + pause, user });
                }
                // A capped burst: the seat goes to the next request at once, while any are left.
                Load::Burst { concurrency: Some(_) }
                    if self.arrived + (self.events.len() as u64) < self.scenario.requests =>
                {
                    self.events.push(Arrival { time_s: end, user });
                }
                _ => {}
            }
            match self.options.stop {
                Stop::Measured if measured => {
                    self.measured_done += 1;
                    if self.measured_done == self.scenario.requests - self.scenario.warmup {
                        self.state = State::Done;
                        self.recorder.end_window(end);
                    }
                }
                Stop::Saturated { completions } if self.state == State::Running && self.completed >= completions => {
                    self.state = State::Done;
                }
                _ => {}
            }
        }
        self.finishing = finishing;
        self.finishing.clear();
    }
}

/// A request's prompt and output lengths: one draw of a joint table, which keeps their
/// correlation, or one draw of each distribution.
fn draw_lengths(sc: &Scenario, stream: &mut Stream) -> (u32, u32) {
    #[cfg(feature = "empirical")]
    if let crate::dist::TokenDist::Joint { table, .. } = &sc.prompt {
        let [p, o] = table.sample(stream);
        return (p, o);
    }
    (sc.prompt.sample(stream), sc.output.sample(stream))
}

/// A formed step and the identical decode steps after it: `steps` steps lasting `first_s`,
/// `first_s + growth_s`, ...
#[derive(Clone, Copy, Debug)]
struct Jump {
    steps: u64,
    first_s: f64,
    growth_s: f64,
}

/// The most candidates thinning may turn down for one arrival: past it the curve is taken to
/// have stopped (a step or ramp to 0), and no arrival comes again.
const MAX_THINNED: u32 = 1_000_000;

/// An open loop's next arrival after `from_s`: one gap at `rate_rps`, or, under a traffic
/// curve, the first candidate kept by thinning (candidates at the curve's highest rate, each kept
/// with probability factor / highest factor). `None` when the curve never brings another.
fn next_open(
    streams: &mut Streams,
    gamma: Option<&Gamma>,
    rate_rps: f64,
    traffic: Option<Traffic>,
    from_s: f64,
) -> Option<f64> {
    // A build without the `traffic` feature (the page's wasm) never has a curve: saying so here
    // leaves the thinning out of it.
    let Some(traffic) = traffic.filter(|_| cfg!(feature = "traffic")) else {
        return Some(from_s + streams.unit_gap(gamma) / rate_rps);
    };
    let top = traffic.max_factor();
    if top <= 0.0 {
        return None;
    }
    // No replay under a curve (draws do not fit it): the candidates and the coin share a stream.
    let stream = &mut streams.gaps;
    let mut t = from_s;
    for _ in 0..MAX_THINNED {
        t += draw_unit_gap(stream, gamma) / (rate_rps * top);
        if stream.uniform() * top < traffic.factor(t) {
            return Some(t);
        }
    }
    None
}

/// A gap of mean 1: exponential, or gamma.
fn draw_unit_gap(stream: &mut Stream, gamma: Option<&Gamma>) -> f64 {
    match gamma {
        Some(g) => g.sample(stream),
        None => stream.exp1(),
    }
}

/// Total time of `k` steps whose times are `d0, d0 + g, ..., d0 + (k - 1) g`.
#[inline]
fn jump_s(k: u64, d0: f64, g: f64) -> f64 {
    let k = k as f64;
    k * d0 + g * k * (k - 1.0) / 2.0
}

/// The fewest steps of a decode run (from `start`) whose end is at or after `t`, or `cap` if
/// fewer than that many steps end before `t`. Exact and O(1): the closed-form root is settled
/// by at most a few steps of rounding correction.
fn steps_until(start: f64, t: f64, d0: f64, g: f64, cap: u64) -> u64 {
    let cap = cap.max(1);
    let delta = t - start;
    if start + d0 >= t {
        return 1;
    }
    // Every step up to the cap ends before `t` (most often the case): no root to find. Step ends
    // rise with k, rounding included, so this is the answer the search below would reach.
    if start + jump_s(cap, d0, g) < t {
        return cap;
    }
    // Solve k d0 + g k (k - 1) / 2 = delta for k, then settle the rounding exactly.
    let estimate = if g > 0.0 {
        let b = d0 - g / 2.0;
        (-b + (b * b + 2.0 * g * delta).sqrt()) / g
    } else {
        delta / d0
    };
    if estimate.is_nan() || estimate >= cap as f64 {
        // The cap comes first (this also covers an infinite or NaN estimate).
        return cap;
    }
    let mut k = (estimate.ceil().max(1.0) as u64).min(cap);
    // The estimate is within a few ulps of the root, so each loop runs a step or two; the
    // bounds keep that true whatever the rounding.
    let mut fixes = 0;
    while k > 1 && start + jump_s(k - 1, d0, g) >= t && fixes < 64 {
        k -= 1;
        fixes += 1;
    }
    while k < cap && start + jump_s(k, d0, g) < t && fixes < 128 {
        k += 1;
        fixes += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_until_finds_the_first_step_ending_at_or_after_t() {
        for (d0, g) in [(0.01, 0.0), (0.0125, 1e-6), (0.05, 3e-4)] {
            for delta in [0.001, 0.01, 0.0125, 0.3, 2.7, 100.0] {
                let k = steps_until(5.0, 5.0 + delta, d0, g, u64::MAX);
                assert!(5.0 + jump_s(k, d0, g) >= 5.0 + delta, "{d0} {g} {delta}");
                assert!(k == 1 || 5.0 + jump_s(k - 1, d0, g) < 5.0 + delta, "{d0} {g} {delta}");
            }
        }
    }

    #[test]
    fn steps_until_stops_at_its_cap_without_walking() {
        // A nanosecond step and an arrival 10 s away: 1e10 steps, which a walk would take.
        assert_eq!(steps_until(0.0, 10.0, 1e-9, 0.0, 500), 500);
        assert_eq!(steps_until(0.0, f64::INFINITY, 1e-9, 0.0, 7), 7);
        assert_eq!(steps_until(0.0, 1e300, 1e-9, 1e-12, u64::MAX), u64::MAX);
        // Below the cap the answer is the exact one.
        assert_eq!(steps_until(0.0, 0.05, 0.01, 0.0, 500), 5);
    }
}

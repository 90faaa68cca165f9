//! What a run records: per-request timings of measured requests, a fine histogram of every
//! inter-token gap, time-averaged gauges over the measured window, counters, and (optionally) a
//! time series of the queue and token-level traces of a few requests.

use serde::{Deserialize, Serialize};

use crate::stats::LogHistogram;

/// Token-level timeline of one request, for the "two clocks" chart.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Arrival index.
    pub id: u64,
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Output tokens.
    pub output_tokens: u32,
    /// Arrival time.
    pub arrival_s: f64,
    /// First admitted into a step.
    pub scheduled_s: f64,
    /// First token out.
    pub first_token_s: f64,
    /// Every output token's time, the first included.
    pub token_times_s: Vec<f64>,
    /// Last token out.
    pub finish_s: f64,
}

/// One point of the queue's time series: the state from `t_s` until the next point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueuePoint {
    /// Time of the change.
    pub t_s: f64,
    /// `num_requests_running` from then on.
    pub running: u32,
    /// `num_requests_waiting` from then on.
    pub waiting: u32,
}

/// The most queue change points kept; past it the series stops growing (the run does not).
pub const MAX_SERIES_POINTS: usize = 500_000;

/// Collects everything a [`crate::Summary`] is computed from. The simulation tells it what
/// happened; it decides what counts (a measured request, a moment inside the measured window).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Client-side TTFT of each measured request (server-side plus the frontend's time).
    client_ttft_s: Vec<f64>,
    /// Client-side end-to-end latency of each measured request.
    client_e2e_s: Vec<f64>,
    /// The latencies of each measured request.
    samples: RequestSamples,
    /// Every inter-token gap of measured requests.
    itl_s: LogHistogram,
    /// Prompt tokens of measured requests.
    prompt_tokens: u64,
    /// Output tokens of measured requests.
    generation_tokens: u64,
    /// Preemptions inside the measured window.
    num_preemptions: u64,
    /// Completions of any request (warm-up and extra load included) inside the measured window:
    /// the replica's completion rate, which a backlog of warm-up requests must not hide.
    window_completions: u64,
    /// Output tokens of any request emitted inside the measured window.
    window_tokens: u64,
    /// Arrival of the first measured request.
    window_start_s: Option<f64>,
    /// Arrival of the last measured request so far.
    last_measured_arrival_s: f64,
    /// Decode-only steps inside the window, and their total time.
    decode_steps: (u64, f64),
    /// Steps that carry a prefill chunk (or admit or preempt a request), and their total time.
    prefill_steps: (u64, f64),
    /// Completion of the last measured request (or where a truncated run stopped).
    window_end_s: f64,
    gauge_t: f64,
    running: u32,
    waiting: u32,
    kv_used: u64,
    /// Time integrals over the window of `num_requests_running`, `num_requests_waiting` and KV
    /// blocks in use.
    areas: Areas,
    /// Queue change points, when asked for.
    series: Option<Vec<QueuePoint>>,
    /// Traces of the first few measured requests, when asked for.
    traces: Vec<Trace>,
    /// The replica during one step, when asked for.
    snapshot: Option<Snapshot>,
    /// Every engine iteration of a window of the run, when asked for (`Options::step_trace`).
    step_trace: Vec<Snapshot>,
    /// Seats recorded in `step_trace` so far (its memory bound, with [`MAX_TRACED_SEATS`]).
    step_trace_seats: usize,
}

/// Time integrals of the gauges over the measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Areas {
    /// Of `num_requests_running`.
    pub running: f64,
    /// Of `num_requests_waiting`.
    pub waiting: f64,
    /// Of KV blocks in use.
    pub kv_blocks: f64,
}

/// What a finished recorder hands over: the samples it kept, moved out whole.
pub(crate) struct Kept {
    pub client_ttft_s: Vec<f64>,
    pub client_e2e_s: Vec<f64>,
    pub samples: RequestSamples,
    pub itl_s: LogHistogram,
    pub series: Vec<QueuePoint>,
    pub traces: Vec<Trace>,
    pub snapshot: Option<Snapshot>,
    pub step_trace: Vec<Snapshot>,
}

/// Which engine iterations to record, one [`Snapshot`] each: the first `steps` to start once
/// more than `after_arrivals` requests have arrived, at or after `after_s`. A jump over identical decode steps is
/// recorded as its steps, one by one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepWindow {
    /// Requests to arrive before the window opens.
    pub after_arrivals: u64,
    /// Simulated time before which no step is recorded.
    pub after_s: f64,
    /// Iterations to record (at most [`MAX_TRACED_STEPS`]).
    pub steps: u32,
}

/// The most iterations a step trace keeps.
pub const MAX_TRACED_STEPS: usize = 20_000;
/// The most seats a step trace keeps in all (a wide batch fills it before `MAX_TRACED_STEPS`).
pub const MAX_TRACED_SEATS: usize = 1_000_000;

/// The replica during one engine step: its seats, its queue, the step's token budget and its KV
/// cache, for a picture of the engine at one instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// When the step started.
    pub t_s: f64,
    /// `--max-num-seqs`: the seats.
    pub max_num_seqs: u32,
    /// `--max-num-batched-tokens`: the step's token budget.
    pub max_num_batched_tokens: u32,
    /// KV cache blocks in all.
    pub kv_blocks: u64,
    /// KV cache blocks in use once the step's tokens are placed.
    pub kv_blocks_used: u64,
    /// The running requests, in running order.
    pub seats: Vec<Seat>,
    /// Requests in the waiting queue (`num_requests_waiting`).
    pub waiting: u32,
    /// How long each of the first few waiting requests has waited, front of the queue first.
    pub waiting_s: Vec<f64>,
    /// Tokens this step decodes (one per decoding request).
    pub decode_tokens: u32,
    /// Prompt tokens this step prefills (chunks).
    pub prefill_tokens: u32,
    /// The engine iteration's number in the run (a jump over `k` decode steps counts `k`).
    pub index: u64,
    /// How long the step took.
    pub duration_s: f64,
    /// Requests admitted from the waiting queue into this step, by arrival index.
    pub admitted: Vec<u64>,
    /// Requests preempted while forming it (sent back to the front of the queue).
    pub preempted: Vec<u64>,
    /// Requests that emitted their last token in this step and left.
    pub completed: Vec<u64>,
    /// Requests that joined the waiting queue since the step before began, as `(arrival index,
    /// arrival time)` (some may be admitted into this very step).
    pub arrived: Vec<(u64, f64)>,
}

/// One running request during the step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Seat {
    /// Arrival index.
    pub id: u64,
    /// Prompt tokens.
    pub prompt: u32,
    /// Output tokens it will generate.
    pub output: u32,
    /// Output tokens emitted before this step.
    pub emitted: u32,
    /// Tokens this step computes for it: 1 for a decode, a chunk for a prefill, 0 if it sits
    /// this step out.
    pub step_tokens: u32,
    /// Whether those tokens are prefill (the prompt, or a preempted request's recomputation).
    pub prefill: bool,
    /// When it arrived (its TTFT clock starts there).
    pub arrival_s: f64,
    /// When its first token came out, if it has by the start of this step.
    pub first_token_s: Option<f64>,
}

impl Recorder {
    /// A recorder; `series` keeps the queue's change points, and room is made for `traces`
    /// request traces.
    pub fn new(series: bool, traces: usize, measured: usize) -> Self {
        let mut recorder = Recorder { series: series.then(Vec::new), ..Default::default() };
        recorder.traces.reserve(traces);
        // Room for every measured request's samples at once: no copy as they grow, and no
        // doubling past what the run needs.
        recorder.samples.reserve(measured);
        recorder
    }

    /// The running/waiting/KV state changed at `t` (times never go backwards).
    #[inline]
    pub fn gauges(&mut self, t: f64, running: u32, waiting: u32, kv_used: u64) {
        if self.window_start_s.is_some() {
            let dt = t - self.gauge_t;
            self.areas.running += dt * self.running as f64;
            self.areas.waiting += dt * self.waiting as f64;
            self.areas.kv_blocks += dt * self.kv_used as f64;
        }
        self.gauge_t = t;
        if self.series.is_some() {
            self.queue_point(t, running, waiting);
        }
        self.running = running;
        self.waiting = waiting;
        self.kv_used = kv_used;
    }

    /// Adds the queue's state at `t` to its series, if it changed (and the series has room).
    #[cold]
    #[inline(never)]
    fn queue_point(&mut self, t: f64, running: u32, waiting: u32) {
        if let Some(series) = &mut self.series
            && (running != self.running || waiting != self.waiting || series.is_empty())
            && series.len() < MAX_SERIES_POINTS
        {
            series.push(QueuePoint { t_s: t, running, waiting });
        }
    }

    /// `num_requests_running`, `num_requests_waiting` and KV blocks in use now.
    pub fn state(&self) -> (u32, u32, u64) {
        (self.running, self.waiting, self.kv_used)
    }

    /// Whether the measured window has started.
    #[inline]
    pub fn in_window(&self) -> bool {
        self.window_start_s.is_some()
    }

    /// The first measured request arrived at `t`: start the window.
    pub fn start_window(&mut self, t: f64) {
        self.gauge_t = t;
        self.window_start_s = Some(t);
    }

    /// A measured request arrived at `t`.
    #[inline]
    pub fn measured_arrival(&mut self, t: f64) {
        self.last_measured_arrival_s = t;
    }

    /// A measured request finished; `tpot_s` is `None` for one-token answers; `at_length` if it
    /// stopped at its `max_tokens`.
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &mut self,
        ttft_s: f64,
        tpot_s: Option<f64>,
        e2e_s: f64,
        queue_s: f64,
        prompt: u32,
        output: u32,
        at_length: bool,
    ) {
        self.samples.push(ttft_s, tpot_s, e2e_s, queue_s, at_length);
        self.prompt_tokens += prompt as u64;
        self.generation_tokens += output as u64;
    }

    /// The client's view of the request just completed (see [`crate::cost::Frontend`]).
    pub fn client(&mut self, ttft_s: f64, e2e_s: f64) {
        self.client_ttft_s.push(ttft_s);
        self.client_e2e_s.push(e2e_s);
    }

    /// A request (of any kind) finished: counted inside the window.
    #[inline]
    pub fn count_completion(&mut self) {
        if self.in_window() {
            self.window_completions += 1;
        }
    }

    /// Requests (of any kind) emitted `n` output tokens: counted inside the window.
    #[inline]
    pub fn count_tokens(&mut self, n: u64) {
        if self.in_window() {
            self.window_tokens += n;
        }
    }

    /// `n` requests were preempted: counted inside the window.
    #[inline]
    pub fn count_preemptions(&mut self, n: u64) {
        if self.in_window() {
            self.num_preemptions += n;
        }
    }

    /// `count` measured requests each saw an inter-token gap of `gap_s`.
    #[inline]
    pub fn itl(&mut self, gap_s: f64, count: u64) {
        self.itl_s.add(gap_s, count);
    }

    /// `count` measured requests each saw the `k` gaps `first_s`, `first_s + growth_s`, ...
    #[inline]
    pub fn itl_ramp(&mut self, first_s: f64, growth_s: f64, k: u64, count: u64) {
        self.itl_s.add_ramp(first_s, growth_s, k, count);
    }

    /// `k` steps taking `duration_s` in all ran: decode-only ones, or one that carries prefill.
    pub fn steps(&mut self, decode_only: bool, k: u64, duration_s: f64) {
        let kind = if decode_only { &mut self.decode_steps } else { &mut self.prefill_steps };
        kind.0 += k;
        kind.1 += duration_s;
    }

    /// Closes the window at `t`.
    pub fn end_window(&mut self, t: f64) {
        let (r, w, k) = (self.running, self.waiting, self.kv_used);
        self.gauges(t, r, w, k);
        self.window_end_s = t;
    }

    /// Starts tracing a request's tokens; its index among the traces is the order of the calls.
    pub fn start_trace(&mut self, trace: Trace) {
        self.traces.push(trace);
    }

    /// The `i`-th traced request.
    #[inline]
    pub fn trace_mut(&mut self, i: usize) -> &mut Trace {
        &mut self.traces[i]
    }

    /// Whether a [`Snapshot`] has been kept.
    pub fn has_snapshot(&self) -> bool {
        self.snapshot.is_some()
    }

    /// Keeps `snapshot` as the run's picture of one step.
    pub fn keep_snapshot(&mut self, snapshot: Option<Snapshot>) {
        self.snapshot = snapshot;
    }

    /// Engine iterations traced so far.
    pub fn traced_steps(&self) -> usize {
        self.step_trace.len()
    }

    /// Seats in the iterations traced so far (what bounds the trace's memory).
    pub fn traced_seats(&self) -> usize {
        self.step_trace_seats
    }

    /// Traces the iterations in `steps`, in order, leaving it empty.
    pub fn trace_steps(&mut self, steps: &mut Vec<Snapshot>) {
        self.step_trace_seats += steps.iter().map(|s| s.seats.len()).sum::<usize>();
        self.step_trace.append(steps);
    }

    /// The traced iterations from the `from`-th on.
    pub fn traced_from_mut(&mut self, from: usize) -> &mut [Snapshot] {
        &mut self.step_trace[from..]
    }

    /// Drops the traced iterations from the `from`-th on that started before `after_s`.
    #[cold]
    #[inline(never)]
    pub fn untrace_before(&mut self, from: usize, after_s: f64) {
        let trace = &mut self.step_trace;
        let early = trace[from..].iter().take_while(|s| s.t_s < after_s).count();
        self.step_trace_seats -= trace[from..from + early].iter().map(|s| s.seats.len()).sum::<usize>();
        trace.drain(from..from + early);
    }

    /// The latencies of each measured request finished so far.
    pub fn samples(&self) -> &RequestSamples {
        &self.samples
    }

    /// Every inter-token gap of measured requests so far.
    pub fn itl_s(&self) -> &LogHistogram {
        &self.itl_s
    }

    /// Measured requests finished so far.
    pub fn requests_completed(&self) -> usize {
        self.samples.len()
    }

    /// Preemptions inside the measured window.
    pub fn num_preemptions(&self) -> u64 {
        self.num_preemptions
    }

    /// Prompt tokens of measured requests.
    pub fn prompt_tokens(&self) -> u64 {
        self.prompt_tokens
    }

    /// Output tokens of measured requests.
    pub fn generation_tokens(&self) -> u64 {
        self.generation_tokens
    }

    /// Completions and output tokens of any request inside the measured window.
    pub fn window_counts(&self) -> (u64, u64) {
        (self.window_completions, self.window_tokens)
    }

    /// The measured window: from the first measured arrival (`None` before it) to where it closed.
    pub fn window_s(&self) -> (Option<f64>, f64) {
        (self.window_start_s, self.window_end_s)
    }

    /// Arrival of the last measured request so far.
    pub fn last_measured_arrival_s(&self) -> f64 {
        self.last_measured_arrival_s
    }

    /// The gauges' time integrals over the window.
    pub fn areas(&self) -> Areas {
        self.areas
    }

    /// Decode-only steps inside the window and their total time, then prefill-carrying ones.
    pub fn step_kinds(&self) -> [(u64, f64); 2] {
        [self.decode_steps, self.prefill_steps]
    }

    /// The samples kept, moved out.
    pub(crate) fn into_kept(self) -> Kept {
        Kept {
            client_ttft_s: self.client_ttft_s,
            client_e2e_s: self.client_e2e_s,
            samples: self.samples,
            itl_s: self.itl_s,
            series: self.series.unwrap_or_default(),
            traces: self.traces,
            snapshot: self.snapshot,
            step_trace: self.step_trace,
        }
    }
}

/// Per-request latencies of measured requests, index `i` the `i`-th to finish, for the
/// histograms vLLM exports per request and for judging SLOs. Four numbers a request: the phases
/// vLLM also exports (time in the batch, prefill, decode) are their differences, computed when
/// asked rather than kept (a million-request run keeps 32 MB, not 72).
#[derive(Clone, Debug, Default)]
pub struct RequestSamples {
    /// Arrival to first token (TTFT).
    ttft_s: Vec<f64>,
    /// TPOT, or NaN for a one-token answer, which has none.
    tpot_s: Vec<f64>,
    /// Arrival to last token.
    e2e_s: Vec<f64>,
    /// Arrival to first scheduled.
    queue_s: Vec<f64>,
    /// How many stopped at their `max_tokens` (vLLM's `finished_reason="length"`); the rest
    /// stopped on their own (`"stop"`).
    pub stopped_at_length: u64,
}

impl RequestSamples {
    /// Makes room for `n` more requests.
    pub(crate) fn reserve(&mut self, n: usize) {
        for v in [&mut self.ttft_s, &mut self.tpot_s, &mut self.e2e_s, &mut self.queue_s] {
            v.reserve_exact(n);
        }
    }

    /// A request finished; `tpot_s` is `None` for a one-token answer.
    pub(crate) fn push(&mut self, ttft_s: f64, tpot_s: Option<f64>, e2e_s: f64, queue_s: f64, at_length: bool) {
        self.ttft_s.push(ttft_s);
        self.tpot_s.push(tpot_s.unwrap_or(f64::NAN));
        self.e2e_s.push(e2e_s);
        self.queue_s.push(queue_s);
        self.stopped_at_length += u64::from(at_length);
    }

    /// Requests recorded.
    pub fn len(&self) -> usize {
        self.e2e_s.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.e2e_s.is_empty()
    }

    /// TTFT of each request.
    pub fn ttft_s(&self) -> &[f64] {
        &self.ttft_s
    }

    /// Arrival to last token of each request.
    pub fn e2e_s(&self) -> &[f64] {
        &self.e2e_s
    }

    /// Arrival to first scheduled of each request.
    pub fn queue_s(&self) -> &[f64] {
        &self.queue_s
    }

    /// TPOT of each request with more than one output token.
    pub fn tpot_s(&self) -> impl Iterator<Item = f64> + '_ {
        self.tpot_s.iter().copied().filter(|t| !t.is_nan())
    }

    /// First scheduled to last token: time in the batch (vLLM's inference time).
    pub fn batch_s(&self) -> impl Iterator<Item = f64> + '_ {
        self.e2e_s.iter().zip(&self.queue_s).map(|(e2e, queue)| e2e - queue)
    }

    /// First scheduled to first token.
    pub fn prefill_s(&self) -> impl Iterator<Item = f64> + '_ {
        self.ttft_s.iter().zip(&self.queue_s).map(|(ttft, queue)| ttft - queue)
    }

    /// First token to last token.
    pub fn decode_s(&self) -> impl Iterator<Item = f64> + '_ {
        self.e2e_s.iter().zip(&self.ttft_s).map(|(e2e, ttft)| e2e - ttft)
    }

    /// How many requests kept within both bounds: a TTFT of at most `ttft_s` and a TPOT of at
    /// most `tpot_s` (a one-token answer has no TPOT, so only its TTFT is judged).
    pub fn within(&self, ttft_s: f64, tpot_s: f64) -> usize {
        let pairs = self.ttft_s.iter().zip(&self.tpot_s);
        pairs.filter(|&(&ttft, &tpot)| ttft <= ttft_s && (tpot <= tpot_s || tpot.is_nan())).count()
    }
}

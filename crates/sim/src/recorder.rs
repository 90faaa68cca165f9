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

/// Collects everything a [`crate::Summary`] is computed from.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// TTFT of each measured request.
    pub ttft_s: Vec<f64>,
    /// Client-side TTFT of each measured request (server-side plus the frontend's time).
    pub client_ttft_s: Vec<f64>,
    /// Client-side end-to-end latency of each measured request.
    pub client_e2e_s: Vec<f64>,
    /// TPOT of each measured request with more than one output token.
    pub tpot_s: Vec<f64>,
    /// E2E latency of each measured request.
    pub e2e_s: Vec<f64>,
    /// Queue time of each measured request.
    pub queue_s: Vec<f64>,
    /// Time in the batch of each measured request: first scheduled to last token.
    pub batch_s: Vec<f64>,
    /// Prefill time of each measured request: first scheduled to first token.
    pub prefill_s: Vec<f64>,
    /// Decode time of each measured request: first token to last token.
    pub decode_s: Vec<f64>,
    /// (TTFT, TPOT or 0 for one-token answers) per measured request, for re-judging SLOs.
    pub slo_pairs: Vec<(f64, f64)>,
    /// Every inter-token gap of measured requests.
    pub itl_s: LogHistogram,
    /// Prompt tokens of measured requests.
    pub prompt_tokens: u64,
    /// Output tokens of measured requests.
    pub generation_tokens: u64,
    /// Preemptions inside the measured window.
    pub num_preemptions: u64,
    /// Completions of any request (warm-up and extra load included) inside the measured window:
    /// the replica's completion rate, which a backlog of warm-up requests must not hide.
    pub window_completions: u64,
    /// Output tokens of any request emitted inside the measured window.
    pub window_tokens: u64,
    /// Arrival of the first measured request.
    pub window_start_s: Option<f64>,
    /// Arrival of the last measured request so far.
    pub last_measured_arrival_s: f64,
    /// Decode-only steps inside the window, and their total time.
    pub decode_steps: (u64, f64),
    /// Steps that carry a prefill chunk (or admit or preempt a request), and their total time.
    pub prefill_steps: (u64, f64),
    /// Completion of the last measured request (or where a truncated run stopped).
    pub window_end_s: f64,
    gauge_t: f64,
    running: u32,
    waiting: u32,
    kv_used: u64,
    /// Time integral of `num_requests_running` over the window.
    pub area_running: f64,
    /// Time integral of `num_requests_waiting` over the window.
    pub area_waiting: f64,
    /// Time integral of KV blocks in use over the window.
    pub area_kv_blocks: f64,
    /// Queue change points, when asked for.
    pub series: Option<Vec<QueuePoint>>,
    /// Traces of the first few measured requests, when asked for.
    pub traces: Vec<Trace>,
    /// The replica during one step, when asked for.
    pub snapshot: Option<Snapshot>,
    /// Every engine iteration of a window of the run, when asked for (`Options::step_trace`).
    pub step_trace: Vec<Snapshot>,
    /// Seats recorded in `step_trace` so far (its memory bound, with [`MAX_TRACED_SEATS`]).
    pub step_trace_seats: usize,
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
    /// A recorder; `series` keeps the queue's change points.
    pub fn new(series: bool) -> Self {
        Recorder { series: series.then(Vec::new), ..Default::default() }
    }

    /// The running/waiting/KV state changed at `t` (times never go backwards).
    pub fn gauges(&mut self, t: f64, running: u32, waiting: u32, kv_used: u64) {
        if self.window_start_s.is_some() {
            let dt = t - self.gauge_t;
            self.area_running += dt * self.running as f64;
            self.area_waiting += dt * self.waiting as f64;
            self.area_kv_blocks += dt * self.kv_used as f64;
        }
        self.gauge_t = t;
        if let Some(series) = &mut self.series
            && (running != self.running || waiting != self.waiting || series.is_empty())
            && series.len() < MAX_SERIES_POINTS
        {
            series.push(QueuePoint { t_s: t, running, waiting });
        }
        self.running = running;
        self.waiting = waiting;
        self.kv_used = kv_used;
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

    /// A measured request finished; `tpot_s` is `None` for one-token answers.
    pub fn complete(&mut self, ttft_s: f64, tpot_s: Option<f64>, e2e_s: f64, queue_s: f64, prompt: u32, output: u32) {
        self.ttft_s.push(ttft_s);
        if let Some(tpot) = tpot_s {
            self.tpot_s.push(tpot);
        }
        self.e2e_s.push(e2e_s);
        self.queue_s.push(queue_s);
        self.batch_s.push(e2e_s - queue_s);
        self.prefill_s.push(ttft_s - queue_s);
        self.decode_s.push(e2e_s - ttft_s);
        self.slo_pairs.push((ttft_s, tpot_s.unwrap_or(0.0)));
        self.prompt_tokens += prompt as u64;
        self.generation_tokens += output as u64;
    }

    /// The client's view of the request just completed (see [`crate::cost::Frontend`]).
    pub fn client(&mut self, ttft_s: f64, e2e_s: f64) {
        self.client_ttft_s.push(ttft_s);
        self.client_e2e_s.push(e2e_s);
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
}

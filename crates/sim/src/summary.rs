//! A run's results: the [`Summary`] (design.md's contract, names as vLLM names them) and the
//! [`Outcome`] that also keeps what the page draws and re-judges.

use serde::{Deserialize, Serialize};

use crate::cost::Frontend;
use crate::recorder::{QueuePoint, Recorder, RequestSamples, Snapshot, Trace};
use crate::scenario::{Capacity, Load, Scenario, Slo};
use crate::stats::{LogHistogram, Stat, stat_of};

/// Little's Law for one part of the replica, measured rather than assumed: `l` should equal
/// `lambda_rps x w_s` in steady state, where L and W describe the same part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LittlesLaw {
    /// Time-average of the requests in the part over the measured window (running + waiting
    /// for the replica, running for the batch).
    pub l: f64,
    /// Completion rate of measured requests.
    pub lambda_rps: f64,
    /// Mean time measured requests spend in the part (E2E for the replica, time in the batch
    /// for the batch).
    pub w_s: f64,
    /// `l / (lambda_rps x w_s) - 1`; far from 0 means the run never reached steady state.
    pub rel_error: f64,
}

/// The summary of one run; times in seconds, rates per second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// `open` or `closed`.
    pub load_mode: String,
    /// Measured requests that finished.
    pub requests_completed: u64,
    /// Every request that arrived, warm-up and extra load included.
    pub requests_arrived: u64,
    /// From the first measured arrival to the last measured completion.
    pub duration_s: f64,
    /// Completions per second inside the measured window (every request finishing in it counts,
    /// so a backlog left by the warm-up does not read as lost throughput).
    pub throughput_rps: f64,
    /// Output tokens per second inside the measured window.
    pub output_tokens_per_s: f64,
    /// Requests meeting both SLOs per second: throughput x SLO attainment (vLLM's benchmark
    /// definition, good requests per second, on this run's completion rate).
    pub goodput_rps: f64,
    /// Fraction of measured requests meeting both SLOs.
    pub slo_attainment: f64,
    /// Time to first token, server-side: from arrival at the engine, as
    /// `vllm:time_to_first_token_seconds` sees it.
    pub ttft_s: Stat,
    /// Time to first token as a client sees it (`vllm bench serve`): `ttft_s` plus the time
    /// outside the engine (`cost.frontend_ms` and `cost.frontend_per_token_ms` per prompt token);
    /// the same as `ttft_s` when those are 0.
    pub client_ttft_s: Stat,
    /// Time per output token, per request with more than one output token.
    pub tpot_s: Stat,
    /// Every gap between consecutive tokens of a request (`vllm:inter_token_latency_seconds`).
    pub itl_s: Stat,
    /// End-to-end latency, server-side.
    pub e2e_s: Stat,
    /// End-to-end latency as a client sees it (every token through the frontend too).
    pub client_e2e_s: Stat,
    /// Time from arrival to first being scheduled.
    pub queue_s: Stat,
    /// Time in the batch, first scheduled to last token (E2E minus queue): the W that goes with
    /// `num_requests_running` in Little's Law.
    pub batch_s: Stat,
    /// Time-average of `vllm:num_requests_running`.
    pub num_requests_running_mean: f64,
    /// Time-average of `vllm:num_requests_waiting`.
    pub num_requests_waiting_mean: f64,
    /// Time-average of `vllm:kv_cache_usage_perc` (a fraction, 1 = full).
    pub kv_cache_usage_mean: f64,
    /// Preemptions in the measured window (`vllm:num_preemptions_total`).
    pub num_preemptions: u64,
    /// Prompt tokens of measured requests (`vllm:prompt_tokens_total`).
    pub prompt_tokens: u64,
    /// Output tokens of measured requests (`vllm:generation_tokens_total`).
    pub generation_tokens: u64,
    /// Little's Law as measured.
    pub littles_law: LittlesLaw,
    /// Little's Law for the batch alone: L = mean `num_requests_running`, W = mean time in the
    /// batch. This is the law `--max-num-seqs` enters: cap / W is the sequence-cap limit.
    pub littles_law_batch: LittlesLaw,
    /// Engine steps inside the measured window, by kind: why batching pays, and what a prefill
    /// chunk costs every sequence riding its step.
    pub steps: StepKinds,
    /// The replica's saturation throughput for this engine and workload, when measured.
    pub capacity_rps: Option<f64>,
    /// The offered load as a fraction of capacity, when the config gave one.
    pub offered_load: Option<f64>,
    /// The open loop's arrival rate (under a traffic curve, its mean over the measured window).
    pub offered_rate_rps: Option<f64>,
    /// The arrival rate this run actually drew: measured requests after the first, over the
    /// time from the first measured arrival to the last. Random gaps make it differ from
    /// `offered_rate_rps` by a few percent; throughput is to be compared with this one.
    pub arrival_rate_rps: f64,
    /// The closed loop's users.
    pub users: Option<u32>,
    /// The SLOs the run was judged by, in ms.
    pub slo_ttft_ms: f64,
    /// The TPOT SLO, in ms.
    pub slo_tpot_ms: f64,
    /// Whether a work cap stopped the run early (statistics cover what completed).
    pub truncated: bool,
    /// Whether the run looks like steady state, so its means and Little's Law can be trusted:
    /// not truncated, at least [`STEADY_MIN_REQUESTS`] measured, Little's Law within
    /// [`STEADY_MAX_LITTLE_ERROR`], and (open loop) completions keeping up with arrivals.
    /// [`Summary::unsteady_reason`] says why not.
    pub steady_state: bool,
}

/// The fewest measured requests a run needs to count as steady.
pub const STEADY_MIN_REQUESTS: u64 = 200;
/// The largest Little's Law error (`|l / (lambda w) - 1|`) of a steady run.
pub const STEADY_MAX_LITTLE_ERROR: f64 = 0.1;
/// An open loop is overloaded (its queue grows for ever) when completions fall below this share
/// of the arrival rate.
pub const STEADY_MIN_KEEP_UP: f64 = 0.95;

impl Summary {
    /// Why this run is not steady state, in words (for warnings), or `None` if it is.
    pub fn unsteady_reason(&self) -> Option<String> {
        if self.truncated {
            return Some("a work cap stopped it early".into());
        }
        if self.requests_completed < STEADY_MIN_REQUESTS {
            return Some(format!(
                "only {} measured requests (steady state needs at least {STEADY_MIN_REQUESTS}; raise run.requests)",
                self.requests_completed
            ));
        }
        if let Some(rate) = self.offered_rate_rps.filter(|&r| r > 0.0) {
            let keep_up = self.throughput_rps / rate;
            if keep_up < STEADY_MIN_KEEP_UP {
                return Some(format!(
                    "overloaded: completions are {:.0}% of arrivals, so the queue grows for as long as it runs",
                    keep_up * 100.0
                ));
            }
        }
        let error = self.littles_law.rel_error;
        if error.is_nan() || error.abs() > STEADY_MAX_LITTLE_ERROR {
            return Some(format!(
                "Little's Law is off by {:.0}% over the measured window (raise run.requests or run.warmup_requests)",
                error * 100.0
            ));
        }
        None
    }
}

/// Everything one run produced: the summary plus what the page draws and re-judges.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The summary.
    pub summary: Summary,
    /// The completion rate goodput is a share of.
    throughput_rps: f64,
    /// Every measured request's latencies, in the order they finished: for `/metrics` histograms,
    /// and to re-judge goodput under other SLOs without re-running.
    pub request_samples: RequestSamples,
    /// Inter-token gaps.
    pub itl_histogram: LogHistogram,
    /// The queue's change points, if recorded.
    pub series: Vec<QueuePoint>,
    /// Traced requests, if any.
    pub traces: Vec<Trace>,
    /// The replica during one step, if asked for (`Options::snapshot_after`).
    pub snapshot: Option<Snapshot>,
    /// Every engine iteration of the window asked for (`Options::step_trace`), in order.
    pub step_trace: Vec<Snapshot>,
    /// The gauges when the run stopped, as a `/metrics` scrape would read them then.
    pub final_state: FinalState,
    /// Simulated time when the run stopped.
    pub end_s: f64,
}

/// `num_requests_running`, `num_requests_waiting` and KV cache usage at the end of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalState {
    /// Requests in the batch.
    pub num_requests_running: u32,
    /// Requests in the queue.
    pub num_requests_waiting: u32,
    /// Fraction of KV cache blocks in use.
    pub kv_cache_usage: f64,
}

/// Engine steps of a run's measured window, decode-only against prefill-carrying.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepKinds {
    /// Steps that only decode (one token for each running sequence).
    pub decode_only: u64,
    /// Their mean duration.
    pub decode_only_mean_s: f64,
    /// Steps that also carry a prefill chunk (or admit or preempt a request).
    pub with_prefill: u64,
    /// Their mean duration.
    pub with_prefill_mean_s: f64,
}

/// Cumulative counts of `samples` at each upper bound `le` (Prometheus histogram buckets; `les`
/// ascending). One pass over the samples, so a scrape of a million requests stays cheap.
pub fn buckets(samples: &[f64], les: &[f64]) -> Vec<u64> {
    let mut counts = vec![0u64; les.len()];
    for &v in samples {
        // The first bound at or above `v`; a NaN is at or below no bound.
        let i = les.partition_point(|&le| le < v);
        if i < les.len() && !v.is_nan() {
            counts[i] += 1;
        }
    }
    let mut total = 0;
    for c in &mut counts {
        total += *c;
        *c = total;
    }
    counts
}

/// Goodput under given SLOs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Goodput {
    /// Requests meeting both SLOs per second.
    pub goodput_rps: f64,
    /// Fraction meeting both.
    pub slo_attainment: f64,
}

impl Outcome {
    /// This run reported against the replica's capacity, measured for its engine and workload
    /// (the summary's `capacity_rps`): a run knows its scenario, not the capacity it came from.
    pub fn with_capacity(mut self, capacity: &Capacity) -> Outcome {
        self.summary.capacity_rps = Some(capacity.rps);
        self
    }

    pub(crate) fn new(scenario: Scenario, rec: Recorder, truncated: bool, arrived: u64) -> Outcome {
        let (window_start_s, end_s) = rec.window_s();
        let start = window_start_s.unwrap_or(end_s);
        let duration = (end_s - start).max(0.0);
        let per_s = |x: f64| if duration > 0.0 { x / duration } else { 0.0 };
        let completed = rec.requests_completed() as u64;
        let (window_completions, window_tokens) = rec.window_counts();
        let lambda = per_s(window_completions as f64);
        let areas = rec.areas();
        let [decode_steps, prefill_steps] = rec.step_kinds();
        let (num_preemptions, prompt_tokens, generation_tokens) =
            (rec.num_preemptions(), rec.prompt_tokens(), rec.generation_tokens());
        let last_measured_arrival_s = rec.last_measured_arrival_s();
        let (running, waiting, kv_used) = rec.state();
        let mut kept = rec.into_kept();
        let r = &kept.samples;
        let judged = judge(r, scenario.slo, lambda);
        let client_is_server = scenario.frontend == Frontend::default();
        // Each statistic selects in one scratch copy, so the samples keep their order (and
        // their pairing, which the phases and the SLO judgement need).
        let mut scratch = Vec::with_capacity(r.len());
        let ttft = stat_in(&mut scratch, r.ttft_s().iter().copied());
        let e2e = stat_in(&mut scratch, r.e2e_s().iter().copied());
        let tpot = stat_in(&mut scratch, r.tpot_s());
        let queue = stat_in(&mut scratch, r.queue_s().iter().copied());
        let batch = stat_in(&mut scratch, r.batch_s());
        let l = per_s(areas.running + areas.waiting);
        let w = e2e.mean;
        let law = |l: f64, w: f64| LittlesLaw {
            l,
            lambda_rps: lambda,
            w_s: w,
            rel_error: if lambda * w > 0.0 { l / (lambda * w) - 1.0 } else { 0.0 },
        };
        let (users, rate, mode) = match scenario.load {
            // Under a traffic curve, the rate it offered over the measured window, on average.
            Load::Open { rate_rps, .. } => {
                let over_window = scenario.traffic().map_or(1.0, |t| t.mean_factor(start, start + duration));
                (None, Some(rate_rps * over_window), "open")
            }
            Load::Closed { users, .. } => (Some(users), None, "closed"),
            Load::Burst { concurrency } => (concurrency, None, "burst"),
            Load::Routed => (None, None, "routed"),
        };
        let (slo_ttft_ms, slo_tpot_ms) = scenario.slo.ms();
        let summary = Summary {
            load_mode: mode.to_string(),
            requests_completed: completed,
            requests_arrived: arrived,
            duration_s: duration,
            throughput_rps: lambda,
            output_tokens_per_s: per_s(window_tokens as f64),
            goodput_rps: judged.goodput_rps,
            slo_attainment: judged.slo_attainment,
            ttft_s: ttft,
            // Without a frontend's time the simulation keeps no client-side samples: they are
            // the server's.
            client_ttft_s: if client_is_server { ttft } else { stat_of(&mut kept.client_ttft_s) },
            client_e2e_s: if client_is_server { e2e } else { stat_of(&mut kept.client_e2e_s) },
            tpot_s: tpot,
            itl_s: kept.itl_s.stat(),
            e2e_s: e2e,
            queue_s: queue,
            num_requests_running_mean: per_s(areas.running),
            num_requests_waiting_mean: per_s(areas.waiting),
            kv_cache_usage_mean: per_s(areas.kv_blocks) / scenario.engine.kv_blocks as f64,
            num_preemptions,
            prompt_tokens,
            generation_tokens,
            batch_s: batch,
            littles_law: law(l, w),
            littles_law_batch: law(per_s(areas.running), batch.mean),
            steps: {
                let mean = |(n, t): (u64, f64)| if n > 0 { t / n as f64 } else { 0.0 };
                StepKinds {
                    decode_only: decode_steps.0,
                    decode_only_mean_s: mean(decode_steps),
                    with_prefill: prefill_steps.0,
                    with_prefill_mean_s: mean(prefill_steps),
                }
            },
            capacity_rps: None,
            offered_load: scenario.offered_load,
            offered_rate_rps: rate,
            arrival_rate_rps: {
                let measured = arrived.saturating_sub(scenario.warmup).min(scenario.requests - scenario.warmup);
                let span = last_measured_arrival_s - start;
                if measured > 1 && span > 0.0 { (measured - 1) as f64 / span } else { 0.0 }
            },
            users,
            slo_ttft_ms,
            slo_tpot_ms,
            truncated,
            steady_state: false,
        };
        let summary = Summary { steady_state: summary.unsteady_reason().is_none(), ..summary };
        let final_state = FinalState {
            num_requests_running: running,
            num_requests_waiting: waiting,
            kv_cache_usage: kv_used as f64 / scenario.engine.kv_blocks as f64,
        };
        Outcome {
            summary,
            final_state,
            end_s,
            throughput_rps: lambda,
            request_samples: kept.samples,
            itl_histogram: kept.itl_s,
            series: kept.series,
            traces: kept.traces,
            snapshot: kept.snapshot,
            step_trace: kept.step_trace,
        }
    }

    /// Goodput and SLO attainment of this run under other SLOs (no re-simulation: the SLOs do not
    /// change what the engine does, only which requests count).
    pub fn goodput(&self, slo: Slo) -> Goodput {
        judge(&self.request_samples, slo, self.throughput_rps)
    }

    /// Cumulative TTFT counts at each upper bound `le` (Prometheus histogram buckets).
    pub fn ttft_buckets(&self, les: &[f64]) -> Vec<u64> {
        buckets(self.request_samples.ttft_s(), les)
    }

    /// Cumulative inter-token-gap counts at each upper bound `le`, to histogram resolution.
    pub fn itl_buckets(&self, les: &[f64]) -> Vec<u64> {
        les.iter().map(|&le| self.itl_histogram.count_le(le)).collect()
    }
}

/// The statistics of `values`, selected in `scratch`.
fn stat_in(scratch: &mut Vec<f64>, values: impl Iterator<Item = f64>) -> Stat {
    scratch.clear();
    scratch.extend(values);
    stat_of(scratch)
}

/// SLO attainment of measured requests, and goodput as that share of the completion rate.
fn judge(samples: &RequestSamples, slo: Slo, throughput_rps: f64) -> Goodput {
    let good = samples.within(slo.ttft_s, slo.tpot_s);
    let slo_attainment = if samples.is_empty() { 0.0 } else { good as f64 / samples.len() as f64 };
    Goodput { goodput_rps: slo_attainment * throughput_rps, slo_attainment }
}

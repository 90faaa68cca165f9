//! A run as a vLLM `/metrics` scrape would show it: Prometheus text format (version 0.0.4) with
//! vLLM's metric names, types, buckets and labels. One writer, [`render`], serves a finished run
//! ([`prometheus_text`], the page's simulated metrics panel) and a running one ([`live_text`],
//! `kneelab serve-metrics`), both through a [`MetricsView`], which also reads itself back as a
//! dashboard would ([`MetricsView::dashboard`]).

use std::fmt::Write;

use serde::Serialize;

use crate::quantile::{Quantile, histogram_quantile};
use crate::recorder::RequestSamples;
use crate::simulation::Simulation;
use crate::stats::LogHistogram;
use crate::summary::{Outcome, buckets};

/// vLLM's bucket bounds for `vllm:time_to_first_token_seconds`.
pub const TTFT_BUCKETS_S: [f64; 22] = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
    160.0, 640.0, 2560.0,
];

/// vLLM's bucket bounds for `vllm:inter_token_latency_seconds`.
pub const ITL_BUCKETS_S: [f64; 19] =
    [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];

/// vLLM's bucket bounds for `vllm:request_time_per_output_token_seconds` (as for ITL).
pub const TPOT_BUCKETS_S: [f64; 19] = ITL_BUCKETS_S;

/// vLLM's bucket bounds for the request-phase histograms: `vllm:e2e_request_latency_seconds`,
/// `vllm:request_queue_time_seconds`, `vllm:request_prefill_time_seconds` and
/// `vllm:request_decode_time_seconds`.
pub const REQUEST_LATENCY_BUCKETS_S: [f64; 21] = [
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
    1920.0, 7680.0,
];

/// What a `/metrics` scrape shows: gauges as of one instant, counters and per-request samples
/// of the requests recorded by then, from a finished run ([`MetricsView::of_outcome`]) or a
/// running one ([`MetricsView::of_simulation`]). Samples may be in any order.
#[derive(Clone, Debug)]
pub struct MetricsView<'a> {
    /// `vllm:num_requests_running`.
    pub num_requests_running: u32,
    /// `vllm:num_requests_waiting`.
    pub num_requests_waiting: u32,
    /// `vllm:kv_cache_usage_perc` (a fraction, 1 = full).
    pub kv_cache_usage: f64,
    /// `vllm:num_preemptions_total`.
    pub num_preemptions: u64,
    /// `vllm:prompt_tokens_total`.
    pub prompt_tokens: u64,
    /// `vllm:generation_tokens_total`.
    pub generation_tokens: u64,
    /// TTFT per finished request; its length is `vllm:request_success_total`.
    pub ttft_s: &'a [f64],
    /// TPOT per finished request with more than one output token.
    pub tpot_s: Vec<f64>,
    /// E2E latency per finished request.
    pub e2e_s: &'a [f64],
    /// Queue time per finished request.
    pub queue_s: &'a [f64],
    /// Time in the batch (first scheduled to last token) per finished request.
    pub inference_s: Vec<f64>,
    /// Prefill time per finished request.
    pub prefill_s: Vec<f64>,
    /// Decode time per finished request.
    pub decode_s: Vec<f64>,
    /// Every inter-token gap.
    pub itl: &'a LogHistogram,
    /// Finished requests that stopped at their `max_tokens`.
    pub stopped_at_length: u64,
}

impl<'a> MetricsView<'a> {
    /// A finished run: gauges as at its end, counters and histograms over its measured window.
    pub fn of_outcome(outcome: &'a Outcome) -> Self {
        let (s, f) = (&outcome.summary, &outcome.final_state);
        MetricsView {
            num_requests_running: f.num_requests_running,
            num_requests_waiting: f.num_requests_waiting,
            kv_cache_usage: f.kv_cache_usage,
            num_preemptions: s.num_preemptions,
            prompt_tokens: s.prompt_tokens,
            generation_tokens: s.generation_tokens,
            ..MetricsView::of_samples(&outcome.request_samples, &outcome.itl_histogram)
        }
    }

    /// A running simulation: gauges as of now, counters and histograms over every measured
    /// request finished so far (with `run.warmup_requests` 0, every request since time 0,
    /// cumulative as a real server counts).
    pub fn of_simulation(sim: &'a Simulation) -> Self {
        let rec = sim.recorder();
        MetricsView {
            num_requests_running: sim.num_requests_running() as u32,
            num_requests_waiting: sim.num_requests_waiting() as u32,
            kv_cache_usage: sim.kv_cache_usage(),
            num_preemptions: rec.num_preemptions(),
            prompt_tokens: rec.prompt_tokens(),
            generation_tokens: rec.generation_tokens(),
            ..MetricsView::of_samples(rec.samples(), rec.itl_s())
        }
    }

    /// The per-request samples (the phases computed from them), with the gauges and counters
    /// at zero.
    fn of_samples(r: &'a RequestSamples, itl: &'a LogHistogram) -> Self {
        MetricsView {
            num_requests_running: 0,
            num_requests_waiting: 0,
            kv_cache_usage: 0.0,
            num_preemptions: 0,
            prompt_tokens: 0,
            generation_tokens: 0,
            ttft_s: r.ttft_s(),
            tpot_s: r.tpot_s().collect(),
            e2e_s: r.e2e_s(),
            queue_s: r.queue_s(),
            inference_s: r.batch_s().collect(),
            prefill_s: r.prefill_s().collect(),
            decode_s: r.decode_s().collect(),
            itl,
            stopped_at_length: r.stopped_at_length,
        }
    }

    /// `vllm:request_success_total`: finished requests.
    pub fn requests_succeeded(&self) -> u64 {
        self.e2e_s.len() as u64
    }

    /// What a dashboard reads off this scrape: the gauges and the preemption counter, and the
    /// 99th percentiles `histogram_quantile(0.99, ...)` gives from the very buckets [`render`]
    /// writes, each by its vLLM metric name.
    pub fn dashboard(&self) -> Dashboard {
        let per_request = |les: &[f64], samples: &[f64]| {
            histogram_quantile(0.99, &cumulative(les, buckets(samples, les), samples.len() as u64))
        };
        let itl = cumulative(&ITL_BUCKETS_S, itl_counts(self.itl), self.itl.count());
        Dashboard {
            values: [
                ("vllm:num_requests_running", f64::from(self.num_requests_running)),
                ("vllm:num_requests_waiting", f64::from(self.num_requests_waiting)),
                ("vllm:kv_cache_usage_perc", self.kv_cache_usage),
                ("vllm:num_preemptions_total", self.num_preemptions as f64),
            ],
            p99: [
                ("vllm:time_to_first_token_seconds", per_request(&TTFT_BUCKETS_S, self.ttft_s)),
                ("vllm:request_time_per_output_token_seconds", per_request(&TPOT_BUCKETS_S, &self.tpot_s)),
                ("vllm:inter_token_latency_seconds", histogram_quantile(0.99, &itl)),
            ],
        }
    }
}

/// A scrape as a dashboard reads it ([`MetricsView::dashboard`]), by vLLM's metric names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dashboard {
    /// The gauges and the preemption counter, as the scrape states them.
    #[serde(serialize_with = "as_map")]
    pub values: [(&'static str, f64); 4],
    /// `histogram_quantile(0.99, NAME_bucket)` of TTFT, TPOT and ITL; none without requests.
    #[serde(serialize_with = "as_map")]
    pub p99: [(&'static str, Option<Quantile>); 3],
}

/// Name-value pairs written as a map (an object, by name), in their order.
fn as_map<S: serde::Serializer, V: Serialize>(pairs: &[(&'static str, V)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// `(le, cumulative count)` pairs as a scrape lists them, `+Inf` last.
fn cumulative(les: &[f64], counts: Vec<u64>, total: u64) -> Vec<(f64, f64)> {
    les.iter().zip(counts).map(|(&le, c)| (le, c as f64)).chain([(f64::INFINITY, total as f64)]).collect()
}

/// The ITL histogram's counts at vLLM's bounds.
fn itl_counts(itl: &LogHistogram) -> Vec<u64> {
    ITL_BUCKETS_S.iter().map(|&le| itl.count_le(le)).collect()
}

/// The `/metrics` text of a finished run: gauges as at the end of the run, counters and
/// histograms over the measured window. `model` is the `model_name` label.
pub fn prometheus_text(outcome: &Outcome, model: &str) -> String {
    render(&MetricsView::of_outcome(outcome), model)
}

/// The `/metrics` text of a running simulation, as of its current time (see
/// [`MetricsView::of_simulation`]). `model` is the `model_name` label.
pub fn live_text(sim: &Simulation, model: &str) -> String {
    render(&MetricsView::of_simulation(sim), model)
}

/// Why a request finished, as vLLM labels `vllm:request_success_total`: a simulated request
/// stops at its drawn output length, which is its own end (`"stop"`, as an EOS token) unless it
/// is the length the workload cuts it off at (`"length"`, `max_tokens`); none aborts. vLLM
/// exports every reason, at 0 when unused.
const FINISHED_REASONS: [&str; 3] = ["stop", "length", "abort"];

/// Writes `view` as Prometheus text with vLLM's names, types, help, buckets and labels
/// (`engine="0"`, `model_name`). Counters carry `_total` in HELP and TYPE, as Python's
/// prometheus_client writes them.
pub fn render(view: &MetricsView<'_>, model: &str) -> String {
    let labels = format!("engine=\"0\",model_name=\"{}\"", escape_label(model));
    let mut out = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, value: f64| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{{{labels}}} {}", number(value));
    };
    metric(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        view.num_requests_running as f64,
    );
    metric(
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        view.num_requests_waiting as f64,
    );
    metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", view.kv_cache_usage);
    metric(
        "vllm:num_preemptions_total",
        "counter",
        "Cumulative number of preemption from the engine.",
        view.num_preemptions as f64,
    );
    metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", view.prompt_tokens as f64);
    metric(
        "vllm:generation_tokens_total",
        "counter",
        "Number of generation tokens processed.",
        view.generation_tokens as f64,
    );
    let name = "vllm:request_success_total";
    let _ = writeln!(out, "# HELP {name} Count of successfully processed requests.\n# TYPE {name} counter");
    let length = view.stopped_at_length.min(view.requests_succeeded());
    for reason in FINISHED_REASONS {
        let n = match reason {
            "stop" => view.requests_succeeded() - length,
            "length" => length,
            _ => 0,
        };
        let _ = writeln!(out, "{name}{{{labels},finished_reason=\"{reason}\"}} {}", number(n as f64));
    }
    let mut histogram = |name: &str, help: &str, les: &[f64], counts: Vec<u64>, count: u64, sum: f64| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (le, c) in les.iter().zip(counts) {
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{}\"}} {c}", number(*le));
        }
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_count{{{labels}}} {count}");
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", number(sum));
    };
    let mut per_request = |name: &str, help: &str, les: &[f64], samples: &[f64]| {
        histogram(name, help, les, buckets(samples, les), samples.len() as u64, samples.iter().sum());
    };
    per_request(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        &TTFT_BUCKETS_S,
        view.ttft_s,
    );
    per_request(
        "vllm:request_time_per_output_token_seconds",
        "Histogram of time_per_output_token_seconds per request.",
        &TPOT_BUCKETS_S,
        &view.tpot_s,
    );
    per_request(
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        &REQUEST_LATENCY_BUCKETS_S,
        view.e2e_s,
    );
    per_request(
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.",
        &REQUEST_LATENCY_BUCKETS_S,
        view.queue_s,
    );
    per_request(
        "vllm:request_inference_time_seconds",
        "Histogram of time spent in RUNNING phase for request.",
        &REQUEST_LATENCY_BUCKETS_S,
        &view.inference_s,
    );
    per_request(
        "vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase for request.",
        &REQUEST_LATENCY_BUCKETS_S,
        &view.prefill_s,
    );
    per_request(
        "vllm:request_decode_time_seconds",
        "Histogram of time spent in DECODE phase for request.",
        &REQUEST_LATENCY_BUCKETS_S,
        &view.decode_s,
    );
    histogram(
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        &ITL_BUCKETS_S,
        itl_counts(view.itl),
        view.itl.count(),
        view.itl.sum(),
    );
    out
}

/// A label value as the text format escapes it: backslash, double quote and line feed.
fn escape_label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Prometheus numbers: integers print with ".0", as the Python client does.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.1}") } else { format!("{v}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, LoadConfig, Options, RunConfig, Simulation};

    const MODEL: &str = "meta-llama/Meta-Llama-3-8B-Instruct";

    /// The value of the first sample line starting with `prefix` (a name, or a name and labels).
    fn value(text: &str, prefix: &str) -> f64 {
        let line = text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix} in\n{text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    }

    /// Every counter and histogram sample of `text` (gauges left out), as (series, value).
    fn cumulative_samples(text: &str) -> Vec<(String, f64)> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter(|l| l.contains("_total{") || l.contains("_bucket{") || l.contains("_count{") || l.contains("_sum{"))
            .map(|l| {
                let (series, v) = l.rsplit_once(' ').unwrap();
                (series.to_string(), v.parse().unwrap())
            })
            .collect()
    }

    /// `text` without the metric families named, HELP and TYPE lines included.
    fn without(text: &str, families: &[&str]) -> String {
        text.lines()
            .filter(|l| {
                let name = l.trim_start_matches("# HELP ").trim_start_matches("# TYPE ");
                !families.iter().any(|f| {
                    name.starts_with(&format!("{f}{{"))
                        || name.starts_with(&format!("{f}_"))
                        || name.starts_with(&format!("{f} "))
                })
            })
            .map(|l| format!("{l}\n"))
            .collect()
    }

    fn small_run() -> Config {
        Config {
            load: LoadConfig::open_offered(0.9),
            run: RunConfig { requests: 400, warmup_requests: Some(40) },
            ..Config::default()
        }
    }

    #[test]
    fn the_finished_run_text_is_what_it_was_plus_the_new_metrics() {
        // Written by the writer before the live view existed (and before request_success_total and
        // request_inference_time_seconds): everything else must come out byte for byte. Since a
        // run keeps its samples in the order requests finished, a histogram's `_sum` adds them in
        // that order, as a server does (it was the order percentile selection left them in): the
        // TPOT and E2E sums moved in their last digit then, and nothing else.
        let outcome =
            Simulation::new(&crate::prepare_scenario(&small_run()).unwrap(), Options::default()).run().unwrap();
        let text = prometheus_text(&outcome, MODEL);
        let old = include_str!("../tests/golden/finished-run.prom");
        let added = ["vllm:request_success_total", "vllm:request_inference_time_seconds"];
        assert_eq!(without(&text, &added), old);
        for name in added {
            assert!(text.contains(&format!("{name}{{")) || text.contains(&format!("{name}_bucket{{")), "{name}");
        }
        // 360 measured requests: chat replies end on their own, but for the few cut off at the
        // workload's cap.
        let reason = |r: &str| {
            value(
                &text,
                &format!("vllm:request_success_total{{engine=\"0\",model_name=\"{MODEL}\",finished_reason=\"{r}\"}}"),
            )
        };
        assert_eq!(reason("stop") + reason("length"), 360.0);
        assert!(reason("stop") >= 350.0, "{}", reason("stop"));
        assert_eq!(reason("abort"), 0.0);
        assert!(text.contains("# TYPE vllm:request_success_total counter\n"));
        assert!(text.contains("finished_reason=\"abort\"} 0.0\n"), "an unused reason is exported at 0");
        assert_eq!(value(&text, "vllm:request_inference_time_seconds_count"), 360.0);
        // Time in the batch is E2E less the queue.
        let inference = value(&text, "vllm:request_inference_time_seconds_sum");
        let e2e_less_queue =
            value(&text, "vllm:e2e_request_latency_seconds_sum") - value(&text, "vllm:request_queue_time_seconds_sum");
        assert!((inference / e2e_less_queue - 1.0).abs() < 1e-9, "{inference} vs {e2e_less_queue}");
    }

    #[test]
    fn the_live_text_only_grows_and_counts_what_finished() {
        let config = Config { run: RunConfig { requests: 100_000, warmup_requests: Some(0) }, ..small_run() };
        let mut sim = Simulation::new(&crate::prepare_scenario(&config).unwrap(), Options::default());
        let mut before: Option<Vec<(String, f64)>> = None;
        for t in [0.0, 5.0, 20.0, 20.0, 60.0] {
            sim.advance_to(t);
            let text = live_text(&sim, MODEL);
            let finished = sim.recorder().requests_completed() as f64;
            assert_eq!(sim.completed() as f64, finished, "with no warm-up every request is measured");
            for name in [
                "vllm:e2e_request_latency_seconds_count",
                "vllm:time_to_first_token_seconds_count",
                "vllm:request_queue_time_seconds_count",
                "vllm:request_inference_time_seconds_count",
                "vllm:request_prefill_time_seconds_count",
                "vllm:request_decode_time_seconds_count",
            ] {
                assert_eq!(value(&text, name), finished, "{name} at {t} s");
            }
            let stop = value(&text, "vllm:request_success_total{");
            let length =
                format!("vllm:request_success_total{{engine=\"0\",model_name=\"{MODEL}\",finished_reason=\"length\"}}");
            assert_eq!(stop + value(&text, &length), finished, "every finished request, by its reason");
            assert_eq!(value(&text, "vllm:num_requests_running{"), sim.num_requests_running() as f64);
            assert_eq!(value(&text, "vllm:num_requests_waiting{"), sim.num_requests_waiting() as f64);
            assert_eq!(value(&text, "vllm:kv_cache_usage_perc{"), sim.kv_cache_usage());
            let now = cumulative_samples(&text);
            if let Some(before) = &before {
                assert_eq!(before.len(), now.len(), "the same series at every scrape");
                for ((series, a), (same, b)) in before.iter().zip(&now) {
                    assert_eq!(series, same);
                    assert!(b >= a, "{series} went from {a} to {b} by {t} s");
                }
            }
            before = Some(now);
        }
        assert!(sim.completed() > 500, "the run got going: {}", sim.completed());
        assert!(sim.now_s() >= 60.0 && !sim.is_finished());
    }

    #[test]
    fn an_idle_replica_waits_for_its_next_arrival() {
        // One request a minute: at 1 s nothing has arrived yet, so nothing has run.
        let config = Config {
            load: LoadConfig::open_rate(1.0 / 60.0),
            run: RunConfig { requests: 10, warmup_requests: Some(0) },
            ..Config::default()
        };
        let mut sim = Simulation::new(&crate::prepare_scenario(&config).unwrap(), Options::default());
        sim.advance_to(1e-3);
        assert_eq!((sim.arrived(), sim.now_s()), (0, 0.0));
        sim.run_until(1e-3);
        assert_eq!(sim.arrived(), 1, "run_until jumps to the arrival");
    }

    #[test]
    fn a_request_stops_on_its_own_unless_cut_off_at_its_max_tokens() {
        use crate::{DistConfig, WorkloadConfig};
        // (output lengths, the share finishing "length")
        let rows = [
            // A fixed length is a benchmark's max_tokens with --ignore-eos: all cut off.
            (DistConfig::fixed(64), 1.0..=1.0),
            // A uniform draw is the request's own end: none.
            (DistConfig::uniform(16, 128), 0.0..=0.0),
            // Lognormal replies of mean 256: a cap far out cuts off none, a cap near the mean many.
            (DistConfig::lognormal(256.0, 0.8, Some(100_000)), 0.0..=0.0),
            (DistConfig::lognormal(256.0, 0.8, Some(256)), 0.3..=0.7),
        ];
        for (output, share) in rows {
            let config =
                Config { workload: WorkloadConfig::explicit(DistConfig::fixed(128), output.clone()), ..small_run() };
            let outcome =
                Simulation::new(&crate::prepare_scenario(&config).unwrap(), Options::default()).run().unwrap();
            let text = prometheus_text(&outcome, MODEL);
            let reason = |r: &str| {
                let series = format!(
                    "vllm:request_success_total{{engine=\"0\",model_name=\"{MODEL}\",finished_reason=\"{r}\"}}"
                );
                value(&text, &series)
            };
            let (stop, length) = (reason("stop"), reason("length"));
            assert_eq!(stop + length, outcome.summary.requests_completed as f64, "{output:?}");
            assert!(share.contains(&(length / (stop + length))), "{output:?}: {length} of {}", stop + length);
        }
    }

    #[test]
    fn the_dashboard_reads_what_the_text_says() {
        let outcome =
            Simulation::new(&crate::prepare_scenario(&small_run()).unwrap(), Options::default()).run().unwrap();
        let text = prometheus_text(&outcome, MODEL);
        let d = MetricsView::of_outcome(&outcome).dashboard();
        // The gauges and counter, as written.
        let series = |name: &str| format!("{name}{{engine=\"0\",model_name=\"{MODEL}\"}}");
        for (name, v) in &d.values {
            assert_eq!(value(&text, &series(name)), *v, "{name}");
        }
        // Each p99 is histogram_quantile over the buckets the text lists, read back from it.
        for (family, q) in &d.p99 {
            let buckets: Vec<(f64, f64)> = text
                .lines()
                .filter(|l| l.starts_with(&format!("{family}_bucket{{")))
                .map(|l| {
                    let le = l.split("le=\"").nth(1).unwrap().split('"').next().unwrap();
                    let le = if le == "+Inf" { f64::INFINITY } else { le.parse().unwrap() };
                    (le, l.rsplit(' ').next().unwrap().parse().unwrap())
                })
                .collect();
            let q = q.unwrap_or_else(|| panic!("{family}: no p99"));
            assert_eq!(Some(q), histogram_quantile(0.99, &buckets), "{family}");
            assert!(q.value > 0.0 && q.lower < q.value && q.value <= q.upper, "{family}: {q:?}");
        }
    }

    #[test]
    fn buckets_count_samples_at_or_below_each_bound() {
        let les = [0.1, 0.5, 1.0, 2.5];
        let samples = [0.1, 0.0999, 0.5000001, 1.0, 3.0, f64::NAN, -1.0, 2.5, f64::INFINITY];
        let by_filter: Vec<u64> = les.iter().map(|&le| samples.iter().filter(|&&v| v <= le).count() as u64).collect();
        assert_eq!(buckets(&samples, &les), by_filter);
        assert_eq!(buckets(&samples, &les), [3, 3, 5, 6]);
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn scrape_has_vllm_names_and_consistent_histograms() {
        let config = Config {
            load: LoadConfig::open_offered(0.9),
            run: RunConfig { requests: 2000, warmup_requests: Some(200) },
            ..Config::default()
        };
        let outcome = Simulation::new(&crate::prepare_scenario(&config).unwrap(), Options::default()).run().unwrap();
        let text = prometheus_text(&outcome, "meta-llama/Meta-Llama-3-8B-Instruct");
        for name in [
            "vllm:num_requests_running{",
            "vllm:num_requests_waiting{",
            "vllm:kv_cache_usage_perc{",
            "vllm:num_preemptions_total{",
            "vllm:time_to_first_token_seconds_bucket{",
            "vllm:inter_token_latency_seconds_bucket{",
            "vllm:request_time_per_output_token_seconds_bucket{",
            "vllm:e2e_request_latency_seconds_bucket{",
            "vllm:request_queue_time_seconds_bucket{",
            "vllm:request_prefill_time_seconds_bucket{",
            "vllm:request_decode_time_seconds_bucket{",
            "# TYPE vllm:time_to_first_token_seconds histogram",
        ] {
            assert!(text.contains(name), "missing {name}");
        }
        // Every request is in each phase histogram once; the phases add up to E2E.
        let sum = |name: &str| -> f64 {
            let line = text.lines().find(|l| l.starts_with(&format!("{name}_sum"))).unwrap();
            line.rsplit(' ').next().unwrap().parse().unwrap()
        };
        for name in ["e2e_request_latency", "request_queue_time", "request_prefill_time", "request_decode_time"] {
            let count = text.lines().find(|l| l.starts_with(&format!("vllm:{name}_seconds_count"))).unwrap();
            assert!(count.ends_with(" 1800.0") || count.ends_with(" 1800"), "{count}");
        }
        let phases = sum("vllm:request_queue_time_seconds")
            + sum("vllm:request_prefill_time_seconds")
            + sum("vllm:request_decode_time_seconds");
        let e2e = sum("vllm:e2e_request_latency_seconds");
        assert!((phases / e2e - 1.0).abs() < 1e-9, "{phases} vs {e2e}");
        // Buckets are cumulative and end at the count.
        let ttft: Vec<u64> = text
            .lines()
            .filter(|l| l.starts_with("vllm:time_to_first_token_seconds_bucket"))
            .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        assert!(ttft.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*ttft.last().unwrap(), 1800);
    }
}

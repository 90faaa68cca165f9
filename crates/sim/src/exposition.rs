//! A run as a vLLM `/metrics` scrape would show it: Prometheus text format with vLLM's metric
//! names, for the page's simulated metrics panel and `kneelab run --metrics`.

use std::fmt::Write;

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

/// The `/metrics` text of a run: gauges as at the end of the run, counters and histograms over
/// the measured window. `model` is the `model_name` label.
pub fn prometheus_text(outcome: &Outcome, model: &str) -> String {
    let s = &outcome.summary;
    let f = &outcome.final_state;
    let labels = format!("engine=\"0\",model_name=\"{}\"", model.replace('\\', "\\\\").replace('"', "\\\""));
    let mut out = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, value: f64| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{{{labels}}} {}", number(value));
    };
    metric(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        f.num_requests_running as f64,
    );
    metric(
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        f.num_requests_waiting as f64,
    );
    metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", f.kv_cache_usage);
    metric(
        "vllm:num_preemptions_total",
        "counter",
        "Cumulative number of preemption from the engine.",
        s.num_preemptions as f64,
    );
    metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", s.prompt_tokens as f64);
    metric(
        "vllm:generation_tokens_total",
        "counter",
        "Number of generation tokens processed.",
        s.generation_tokens as f64,
    );
    let mut histogram = |name: &str, help: &str, les: &[f64], counts: Vec<u64>, count: u64, sum: f64| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (le, c) in les.iter().zip(counts) {
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{}\"}} {c}", number(*le));
        }
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_count{{{labels}}} {count}");
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", number(sum));
    };
    histogram(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        &TTFT_BUCKETS_S,
        outcome.ttft_buckets(&TTFT_BUCKETS_S),
        outcome.ttft_samples_s.len() as u64,
        outcome.ttft_samples_s.iter().sum(),
    );
    let r = &outcome.request_samples;
    let mut per_request = |name: &str, help: &str, les: &[f64], samples: &[f64]| {
        histogram(name, help, les, buckets(samples, les), samples.len() as u64, samples.iter().sum());
    };
    per_request(
        "vllm:request_time_per_output_token_seconds",
        "Histogram of time_per_output_token_seconds per request.",
        &TPOT_BUCKETS_S,
        &r.tpot_s,
    );
    per_request(
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        &REQUEST_LATENCY_BUCKETS_S,
        &r.e2e_s,
    );
    per_request(
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.",
        &REQUEST_LATENCY_BUCKETS_S,
        &r.queue_s,
    );
    per_request(
        "vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase for request.",
        &REQUEST_LATENCY_BUCKETS_S,
        &r.prefill_s,
    );
    per_request(
        "vllm:request_decode_time_seconds",
        "Histogram of time spent in DECODE phase for request.",
        &REQUEST_LATENCY_BUCKETS_S,
        &r.decode_s,
    );
    histogram(
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        &ITL_BUCKETS_S,
        outcome.itl_buckets(&ITL_BUCKETS_S),
        outcome.itl_histogram.count(),
        outcome.itl_histogram.sum(),
    );
    out
}

/// Prometheus numbers: integers print with ".0", as the Python client does.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.1}") } else { format!("{v}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, LoadConfig, Options, RunConfig, Scenario, Simulation};

    #[test]
    fn scrape_has_vllm_names_and_consistent_histograms() {
        let config = Config {
            load: LoadConfig::open_offered(0.9),
            run: RunConfig { requests: 2000, warmup_requests: Some(200) },
            ..Config::default()
        };
        let outcome = Simulation::new(&Scenario::new(&config).unwrap(), Options::default()).run().unwrap();
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

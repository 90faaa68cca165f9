//! One `/metrics` text read into the vLLM metrics the probe uses, per `model_name`, with every
//! engine (`engine` label) of a model added together as one server.

use std::collections::{BTreeMap, BTreeSet};

use prom_text_format_parser::{ScrapeParseError, Type, ValueType, parse_scrape};
use serde::Serialize;

/// A vLLM counter the probe reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Counter {
    /// Finished requests, every `finished_reason` added together.
    RequestSuccess,
    /// Prompt tokens processed.
    PromptTokens,
    /// Tokens generated.
    GenerationTokens,
    /// Requests preempted (their KV blocks freed, to be recomputed).
    Preemptions,
}

/// A vLLM gauge the probe reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gauge {
    /// Requests in the running batch.
    Running,
    /// Requests in the waiting queue.
    Waiting,
    /// KV-cache usage, a fraction (1 = full).
    KvCacheUsage,
}

/// A vLLM histogram the probe reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hist {
    /// Time to first token.
    Ttft,
    /// Time per output token, one observation per request.
    Tpot,
    /// Every gap between two tokens.
    Itl,
    /// Time waiting before first scheduled.
    Queue,
    /// Time in the batch: first scheduled to last token.
    Inference,
    /// Arrival to last token.
    E2e,
}

/// vLLM's names for each counter, the current one first, then older spellings.
pub const COUNTERS: [(Counter, &[&str]); 4] = [
    (Counter::RequestSuccess, &["vllm:request_success_total"]),
    (Counter::PromptTokens, &["vllm:prompt_tokens_total"]),
    (Counter::GenerationTokens, &["vllm:generation_tokens_total"]),
    (Counter::Preemptions, &["vllm:num_preemptions_total"]),
];

/// vLLM's names for each gauge (`gpu_cache_usage_perc` before v0.10).
pub const GAUGES: [(Gauge, &[&str]); 3] = [
    (Gauge::Running, &["vllm:num_requests_running"]),
    (Gauge::Waiting, &["vllm:num_requests_waiting"]),
    (Gauge::KvCacheUsage, &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]),
];

/// vLLM's names for each histogram (`time_per_output_token_seconds` was the ITL's old name).
pub const HISTOGRAMS: [(Hist, &[&str]); 6] = [
    (Hist::Ttft, &["vllm:time_to_first_token_seconds"]),
    (Hist::Tpot, &["vllm:request_time_per_output_token_seconds"]),
    (Hist::Itl, &["vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"]),
    (Hist::Queue, &["vllm:request_queue_time_seconds"]),
    (Hist::Inference, &["vllm:request_inference_time_seconds"]),
    (Hist::E2e, &["vllm:e2e_request_latency_seconds"]),
];

/// The name a counter is read under.
pub fn counter_name(c: Counter) -> &'static str {
    COUNTERS.iter().find(|(k, _)| *k == c).map_or("", |(_, n)| n[0])
}

/// The name a gauge is read under.
pub fn gauge_name(g: Gauge) -> &'static str {
    GAUGES.iter().find(|(k, _)| *k == g).map_or("", |(_, n)| n[0])
}

/// The name a histogram is read under.
pub fn hist_name(h: Hist) -> &'static str {
    HISTOGRAMS.iter().find(|(k, _)| *k == h).map_or("", |(_, n)| n[0])
}

/// A histogram as scraped: cumulative bucket counts by upper bound (`le`), the last `+Inf`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Histogram {
    /// `(le, cumulative count)`, sorted by `le`.
    pub buckets: Vec<(f64, f64)>,
    /// `_count`.
    pub count: f64,
    /// `_sum`.
    pub sum: f64,
}

impl Histogram {
    fn add_bucket(&mut self, le: f64, v: f64) {
        match self.buckets.iter_mut().find(|(b, _)| *b == le) {
            Some(b) => b.1 += v,
            None => {
                self.buckets.push((le, v));
                self.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
        }
    }
}

/// One model's metrics in a scrape, every engine added together (gauges of running and waiting
/// requests add up; KV usage is the engines' mean).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Model {
    /// The `engine` label values seen (data-parallel engines of one server).
    pub engines: BTreeSet<String>,
    /// Counters by kind.
    pub counters: BTreeMap<Counter, f64>,
    /// Gauges by kind.
    pub gauges: BTreeMap<Gauge, f64>,
    /// Histograms by kind.
    pub histograms: BTreeMap<Hist, Histogram>,
}

/// A `/metrics` text read for vLLM.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Scrape {
    /// Models by `model_name` (an empty name when the label is absent).
    pub models: BTreeMap<String, Model>,
    /// Lines that could not be read, and odd series; the rest of the scrape is still used.
    pub warnings: Vec<String>,
}

/// Why a text is not a vLLM scrape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScrapeError {
    /// One line saying what was expected and what came instead.
    pub message: String,
}

impl std::fmt::Display for ScrapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScrapeError {}

fn error(message: impl Into<String>) -> ScrapeError {
    ScrapeError { message: message.into() }
}

/// Prometheus numbers are Go floats: `+Inf`, `-Inf` and `NaN` included (Rust's parser takes
/// those spellings too, in any case).
fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok()
}

/// What a page that is not Prometheus text looks like, said in a few words.
fn looks_like(text: &str) -> &'static str {
    let head = text.trim_start().get(..64.min(text.trim_start().len())).unwrap_or("").to_ascii_lowercase();
    if head.is_empty() {
        "an empty page"
    } else if head.starts_with("<!doctype") || head.starts_with("<html") || head.starts_with('<') {
        "an HTML page"
    } else if head.starts_with('{') || head.starts_with('[') {
        "JSON"
    } else {
        "text that is not in that format"
    }
}

/// Reads a `/metrics` text. Fails when it is not Prometheus text at all, or has no `vllm:`
/// metric; a malformed series or an odd histogram is a warning, and the rest is kept.
pub fn parse(text: &str) -> Result<Scrape, ScrapeError> {
    const EXPECTED: &str = "expected Prometheus text format (lines such as `vllm:num_requests_running{model_name=\"m\"} 3`, as vLLM serves at /metrics)";
    let (metrics, problem) = parse_scrape(text);
    let mut scrape = Scrape::default();
    match problem {
        Some(ScrapeParseError::Parse(detail)) => {
            let detail = detail.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            let got = looks_like(text);
            return Err(error(if detail.is_empty() || got != "text that is not in that format" {
                format!("{EXPECTED}; got {got}")
            } else {
                format!("{EXPECTED}; got {got} ({detail})")
            }));
        }
        Some(ScrapeParseError::Collect(errors)) => {
            for e in errors.iter().take(3) {
                scrape.warnings.push(format!("lines {}-{} skipped: {}", e.line_no.start + 1, e.line_no.end, e.error));
            }
            if errors.len() > 3 {
                scrape.warnings.push(format!("{} more malformed series skipped", errors.len() - 3));
            }
        }
        None => {}
    }
    let vllm = metrics.iter().filter(|m| m.name.starts_with("vllm:")).count();
    if vllm == 0 {
        return Err(error(format!(
            "no vLLM metrics: the page is Prometheus text with {} metric(s), none named vllm:*; is this a vLLM server's /metrics?",
            metrics.len()
        )));
    }
    let mut kv_engines: BTreeMap<String, usize> = BTreeMap::new();
    let mut bad_values = 0usize;
    for metric in &metrics {
        let name = metric.name.as_str();
        let counter = COUNTERS.iter().find(|(_, n)| n.contains(&name)).map(|(k, _)| *k);
        let gauge = GAUGES.iter().find(|(_, n)| n.contains(&name)).map(|(k, _)| *k);
        let hist = HISTOGRAMS.iter().find(|(_, n)| n.contains(&name)).map(|(k, _)| *k);
        if counter.is_none() && gauge.is_none() && hist.is_none() {
            continue;
        }
        if hist.is_some() && metric.kind != Type::Histogram {
            scrape.warnings.push(format!("{name} is typed {}, not histogram; skipped", metric.kind));
            continue;
        }
        for sample in &metric.samples {
            let label = |key: &str| sample.labels.iter().find(|l| l.key == key).map(|l| l.value.as_str());
            let Some(value) = number(sample.value.value.as_str()) else {
                bad_values += 1;
                continue;
            };
            let model_name = label("model_name").unwrap_or("").to_string();
            let model = scrape.models.entry(model_name).or_default();
            if let Some(engine) = label("engine") {
                model.engines.insert(engine.to_string());
            }
            if let Some(c) = counter {
                *model.counters.entry(c).or_default() += value;
            } else if let Some(g) = gauge {
                // A model's engines: running and waiting add up; KV usage is averaged below.
                *model.gauges.entry(g).or_default() += value;
                if g == Gauge::KvCacheUsage {
                    *kv_engines.entry(label("model_name").unwrap_or("").to_string()).or_default() += 1;
                }
            } else if let Some(h) = hist {
                let histogram = model.histograms.entry(h).or_default();
                match sample.value.value_type {
                    ValueType::Count => histogram.count += value,
                    ValueType::Sum => histogram.sum += value,
                    ValueType::Sample => match label("le").and_then(number) {
                        Some(le) => histogram.add_bucket(le, value),
                        None => bad_values += 1,
                    },
                }
            }
        }
    }
    for (model, n) in kv_engines {
        if let Some(kv) = scrape.models.get_mut(&model).and_then(|m| m.gauges.get_mut(&Gauge::KvCacheUsage))
            && n > 1
        {
            *kv /= n as f64;
        }
    }
    if bad_values > 0 {
        scrape.warnings.push(format!("{bad_values} sample(s) with an unreadable value or le label skipped"));
    }
    for (model_name, model) in &scrape.models {
        for (h, histogram) in &model.histograms {
            if let Some(problem) = odd(histogram) {
                let who = if model_name.is_empty() { String::new() } else { format!(" (model {model_name})") };
                scrape.warnings.push(format!("{}{who}: {problem}", hist_name(*h)));
            }
        }
    }
    Ok(scrape)
}

/// What is odd about a histogram's buckets, if anything: Prometheus still computes a quantile
/// from some of these, but the number deserves suspicion.
pub fn odd(h: &Histogram) -> Option<String> {
    let Some(&(last_le, last)) = h.buckets.last() else {
        return Some("no buckets".into());
    };
    if last_le != f64::INFINITY {
        return Some("no le=\"+Inf\" bucket, so no quantile can be computed".into());
    }
    if h.buckets.len() < 2 {
        return Some("only the +Inf bucket, so no quantile can be computed".into());
    }
    if h.buckets.windows(2).any(|w| w[1].1 < w[0].1) {
        return Some("bucket counts fall as le rises (they must be cumulative)".into());
    }
    if (last - h.count).abs() > 1e-9 * h.count.max(1.0) {
        return Some(format!("the +Inf bucket ({last}) differs from _count ({})", h.count));
    }
    None
}

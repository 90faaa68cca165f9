//! A window of scrapes turned into what an operator asks of a replica: rates from counter
//! increases, quantiles from histogram bucket increases, the gauges' mean, max and trend, and
//! Little's Law on the measured numbers.
//!
//! Increases follow Prometheus's `increase()`: a counter that falls has restarted from zero, so
//! its new value is all increase. A rate is the increase over the time between the window's
//! first and last scrape (Prometheus's `rate()` extrapolates to the range's ends, which gives
//! the same figure when scrapes are evenly spaced).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::scrape::{COUNTERS, Counter, GAUGES, Gauge, HISTOGRAMS, Hist, Histogram, Model, Scrape};
use kneelab_sim::quantile::{Quantile, histogram_quantile};

/// One scrape and when it was taken, in seconds on any clock that only goes forward.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// When the scrape was taken.
    pub t_s: f64,
    /// What it read.
    pub scrape: Scrape,
}

/// A histogram over the window: quantiles from the increases of its buckets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Latency {
    /// Observations inside the window.
    pub observations: f64,
    /// `_sum` increase over `_count` increase.
    pub mean_s: f64,
    /// The median.
    pub p50: Option<Quantile>,
    /// The 90th percentile.
    pub p90: Option<Quantile>,
    /// The 99th percentile, as `histogram_quantile(0.99, rate(..._bucket[window]))` gives it.
    pub p99: Option<Quantile>,
}

/// Which way a gauge went over the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    /// It rose by more than noise over the window: for `num_requests_waiting`, a queue growing
    /// because arrivals outrun the replica.
    Growing,
    /// It fell by more than noise.
    Falling,
    /// Neither.
    Flat,
}

/// A gauge over the window's scrapes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GaugeStats {
    /// Mean of the scraped values (`avg_over_time`).
    pub mean: f64,
    /// Largest scraped value.
    pub max: f64,
    /// The value at the last scrape.
    pub last: f64,
    /// Least-squares slope, per second.
    pub slope_per_s: f64,
    /// Which way it went.
    pub trend: Trend,
}

/// Little's Law for one part of the replica on measured numbers: `l` should be close to
/// `lambda_rps x w_s`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Law {
    /// The mean count in the part (from the gauges).
    pub l: f64,
    /// Completions per second.
    pub lambda_rps: f64,
    /// Mean time in the part (from a histogram's `_sum / _count`).
    pub w_s: f64,
    /// `lambda_rps x w_s`.
    pub predicted: f64,
    /// `l / predicted - 1`.
    pub rel_error: f64,
}

/// One model's window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The `model_name` label.
    pub model: String,
    /// Engines (the `engine` label) added together.
    pub engines: usize,
    /// Scrapes in the window that carry this model.
    pub scrapes: usize,
    /// From the first to the last of them.
    pub window_s: f64,
    /// Finished requests per second (`vllm:request_success_total`, else the E2E histogram's
    /// `_count`).
    pub request_rate_rps: Option<f64>,
    /// Prompt tokens per second.
    pub prompt_tokens_per_s: Option<f64>,
    /// Generated tokens per second.
    pub generation_tokens_per_s: Option<f64>,
    /// Preemptions per second.
    pub preemptions_per_s: Option<f64>,
    /// Time to first token.
    pub ttft: Option<Latency>,
    /// Time per output token, per request.
    pub tpot: Option<Latency>,
    /// Inter-token latency, per gap.
    pub itl: Option<Latency>,
    /// Queue time.
    pub queue: Option<Latency>,
    /// Time in the batch.
    pub inference: Option<Latency>,
    /// End to end.
    pub e2e: Option<Latency>,
    /// `num_requests_running`.
    pub running: Option<GaugeStats>,
    /// `num_requests_waiting`.
    pub waiting: Option<GaugeStats>,
    /// KV-cache usage, a fraction.
    pub kv_cache_usage: Option<GaugeStats>,
    /// Running = rate x time in the batch.
    pub littles_law_batch: Option<Law>,
    /// Running + waiting = rate x E2E.
    pub littles_law_replica: Option<Law>,
    /// What could not be measured, and why; counter resets; odd histograms.
    pub warnings: Vec<String>,
}

/// The models seen in a window, by name.
pub fn models(samples: &[Sample]) -> BTreeSet<String> {
    samples.iter().flat_map(|s| s.scrape.models.keys().cloned()).collect()
}

/// Every model's report over the window, by name.
pub fn analyse_all(samples: &[Sample]) -> Vec<Report> {
    models(samples).iter().map(|m| analyse(samples, m)).collect()
}

/// The increase of a series over the window, as Prometheus's `increase()` counts it (a fall is
/// a restart from zero), and the times of the restarts.
fn increase(points: &[(f64, f64)]) -> (f64, Vec<f64>) {
    let mut total = 0.0;
    let mut resets = Vec::new();
    for w in points.windows(2) {
        let ((_, a), (t, b)) = (w[0], w[1]);
        if b < a {
            total += b;
            resets.push(t);
        } else {
            total += b - a;
        }
    }
    (total, resets)
}

/// How gauges are judged to move: a change over the window of more than this many requests, and
/// more than this share of the mean, is a trend.
const TREND_MIN_CHANGE: f64 = 2.0;
const TREND_MIN_SHARE: f64 = 0.25;

fn gauge_stats(points: &[(f64, f64)], window_s: f64) -> Option<GaugeStats> {
    let n = points.len() as f64;
    let &(_, last) = points.last()?;
    let mean = points.iter().map(|p| p.1).sum::<f64>() / n;
    let max = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let t_mean = points.iter().map(|p| p.0).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - t_mean) * (p.0 - t_mean)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - t_mean) * (p.1 - mean)).sum();
    let slope_per_s = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let change = slope_per_s * window_s;
    let moved = change.abs() > TREND_MIN_CHANGE.max(TREND_MIN_SHARE * mean.abs());
    let trend = match (moved, change > 0.0) {
        (true, true) => Trend::Growing,
        (true, false) => Trend::Falling,
        _ => Trend::Flat,
    };
    Some(GaugeStats { mean, max, last, slope_per_s, trend })
}

/// Renders a reset's time for a warning.
fn at(t: f64, t0: f64) -> String {
    format!("{:.0} s into the window", t - t0)
}

/// One model's report over the window (the scrapes in which it appears).
pub fn analyse(samples: &[Sample], model_name: &str) -> Report {
    let present: Vec<(f64, &Model)> =
        samples.iter().filter_map(|s| s.scrape.models.get(model_name).map(|m| (s.t_s, m))).collect();
    let t0 = present.first().map_or(0.0, |p| p.0);
    let window_s = present.last().map_or(0.0, |p| p.0) - t0;
    let mut warnings: Vec<String> = Vec::new();
    let rated = present.len() >= 2 && window_s > 0.0;
    if !rated {
        warnings.push(if present.len() < 2 {
            "one scrape so far: rates, quantiles and trends need two, some seconds apart".to_string()
        } else {
            "the scrapes are at the same time: rates need two some seconds apart".to_string()
        });
    }

    let counter = |c: Counter, warnings: &mut Vec<String>| -> Option<f64> {
        let name = COUNTERS.iter().find(|(k, _)| *k == c).map_or("", |(_, n)| n[0]);
        let points: Vec<(f64, f64)> =
            present.iter().filter_map(|(t, m)| m.counters.get(&c).map(|v| (*t, *v))).collect();
        if points.is_empty() {
            return None;
        }
        let (inc, resets) = increase(&points);
        if let Some(&t) = resets.first() {
            warnings.push(format!(
                "{name} fell {} ({} time(s)): the server restarted, so the count starts again from zero there",
                at(t, t0),
                resets.len()
            ));
        }
        (rated && points.len() >= 2).then(|| inc / (points[points.len() - 1].0 - points[0].0).max(f64::MIN_POSITIVE))
    };
    let success = counter(Counter::RequestSuccess, &mut warnings);
    let prompt_tokens_per_s = counter(Counter::PromptTokens, &mut warnings);
    let generation_tokens_per_s = counter(Counter::GenerationTokens, &mut warnings);
    let preemptions_per_s = counter(Counter::Preemptions, &mut warnings);

    let latency = |h: Hist, warnings: &mut Vec<String>| -> (Option<Latency>, Option<f64>) {
        let name = HISTOGRAMS.iter().find(|(k, _)| *k == h).map_or("", |(_, n)| n[0]);
        let series: Vec<(f64, &Histogram)> =
            present.iter().filter_map(|(t, m)| m.histograms.get(&h).map(|x| (*t, x))).collect();
        if series.len() < 2 || !rated {
            return (None, None);
        }
        let last = series[series.len() - 1].1;
        if series.iter().any(|(_, x)| x.buckets.iter().map(|b| b.0).ne(last.buckets.iter().map(|b| b.0))) {
            warnings.push(format!("{name}: the bucket bounds changed inside the window; the last scrape's are used"));
        }
        let track = |f: &dyn Fn(&Histogram) -> Option<f64>| -> (f64, Vec<f64>) {
            let points: Vec<(f64, f64)> = series.iter().filter_map(|(t, x)| f(x).map(|v| (*t, v))).collect();
            increase(&points)
        };
        let (count, resets) = track(&|x| Some(x.count));
        if let Some(&t) = resets.first() {
            warnings.push(format!(
                "{name}_count fell {}: the server restarted, so its buckets count again from zero there",
                at(t, t0)
            ));
        }
        let (sum, _) = track(&|x| Some(x.sum));
        let buckets: Vec<(f64, f64)> = last
            .buckets
            .iter()
            .map(|&(le, _)| (le, track(&|x| x.buckets.iter().find(|b| b.0 == le).map(|b| b.1)).0))
            .collect();
        if let Some(problem) = crate::scrape::odd(last) {
            warnings.push(format!("{name}: {problem}"));
        }
        let rate = count / window_s;
        if count <= 0.0 {
            return (None, Some(rate));
        }
        let q = |q: f64| histogram_quantile(q, &buckets);
        (Some(Latency { observations: count, mean_s: sum / count, p50: q(0.5), p90: q(0.9), p99: q(0.99) }), Some(rate))
    };
    let (ttft, _) = latency(Hist::Ttft, &mut warnings);
    let (tpot, _) = latency(Hist::Tpot, &mut warnings);
    let (itl, _) = latency(Hist::Itl, &mut warnings);
    let (queue, _) = latency(Hist::Queue, &mut warnings);
    let (inference, _) = latency(Hist::Inference, &mut warnings);
    let (e2e, e2e_rate) = latency(Hist::E2e, &mut warnings);
    let request_rate_rps = success.or(e2e_rate);

    let gauge = |g: Gauge| -> Option<GaugeStats> {
        let points: Vec<(f64, f64)> = present.iter().filter_map(|(t, m)| m.gauges.get(&g).map(|v| (*t, *v))).collect();
        gauge_stats(&points, window_s)
    };
    let running = gauge(Gauge::Running);
    let waiting = gauge(Gauge::Waiting);
    let kv_cache_usage = gauge(Gauge::KvCacheUsage);
    let in_flight = {
        let points: Vec<(f64, f64)> = present
            .iter()
            .filter_map(|(t, m)| Some((*t, m.gauges.get(&Gauge::Running)? + m.gauges.get(&Gauge::Waiting)?)))
            .collect();
        gauge_stats(&points, window_s)
    };

    let law = |l: Option<f64>, w_s: Option<f64>| -> Option<Law> {
        let (l, lambda_rps, w_s) = (l?, request_rate_rps?, w_s?);
        let predicted = lambda_rps * w_s;
        (predicted > 0.0).then(|| Law { l, lambda_rps, w_s, predicted, rel_error: l / predicted - 1.0 })
    };
    let batch_w = inference.map(|x| x.mean_s).or_else(|| Some(e2e?.mean_s - queue?.mean_s));
    let littles_law_batch = law(running.map(|g| g.mean), batch_w);
    let littles_law_replica = law(in_flight.map(|g| g.mean), e2e.map(|x| x.mean_s));

    // Say what is missing, once each, in the words of what it costs.
    let any = |f: &dyn Fn(&Model) -> bool| present.iter().any(|(_, m)| f(m));
    for (c, names) in COUNTERS {
        let stands_in = c == Counter::RequestSuccess && e2e_rate.is_some();
        if !any(&|m| m.counters.contains_key(&c)) && !stands_in {
            warnings.push(format!("missing {}: {}", names[0], counter_word(c)));
        }
    }
    for (g, names) in GAUGES {
        if !any(&|m| m.gauges.contains_key(&g)) {
            warnings.push(format!("missing {}: {}", names[0], gauge_word(g)));
        }
    }
    for (h, names) in HISTOGRAMS {
        if !any(&|m| m.histograms.contains_key(&h)) {
            warnings.push(format!("missing {}: {}", names[0], hist_word(h)));
        }
    }
    if rated && present.len() == 2 {
        warnings.push("two scrapes: the gauges' mean and trend are from two instants only".into());
    }
    for s in samples.iter().rev().take(1) {
        warnings.extend(s.scrape.warnings.iter().cloned());
    }
    warnings.dedup();

    Report {
        model: model_name.to_string(),
        engines: present.last().map_or(0, |(_, m)| m.engines.len().max(1)),
        scrapes: present.len(),
        window_s,
        request_rate_rps,
        prompt_tokens_per_s,
        generation_tokens_per_s,
        preemptions_per_s,
        ttft,
        tpot,
        itl,
        queue,
        inference,
        e2e,
        running,
        waiting,
        kv_cache_usage,
        littles_law_batch,
        littles_law_replica,
        warnings,
    }
}

fn counter_word(c: Counter) -> &'static str {
    match c {
        Counter::RequestSuccess => "no request rate",
        Counter::PromptTokens => "no prompt token rate",
        Counter::GenerationTokens => "no generation token rate",
        Counter::Preemptions => "no preemption rate",
    }
}

fn gauge_word(g: Gauge) -> &'static str {
    match g {
        Gauge::Running => "no running requests, so no Little's Law",
        Gauge::Waiting => "no waiting queue, so no Little's Law for the replica",
        Gauge::KvCacheUsage => "no KV-cache usage",
    }
}

fn hist_word(h: Hist) -> &'static str {
    match h {
        Hist::Ttft => "no TTFT",
        Hist::Tpot => "no TPOT",
        Hist::Itl => "no ITL",
        Hist::Queue => "no queue time",
        Hist::Inference => "time in the batch is taken as E2E minus queue time",
        Hist::E2e => "no E2E latency, so no Little's Law for the replica",
    }
}

//! The probe against scrapes written as vLLM writes them (prometheus_client's text format:
//! `_total` counters typed under their full name, `engine` and `model_name` labels).

use kneelab_probe::{Sample, Trend, analyse, analyse_all, parse};

/// A scrape of two models, the first served by two data-parallel engines. `n` scales every
/// counter and histogram; `waiting` sets the queue.
fn scrape(n: f64, waiting: f64) -> String {
    let mut out = String::new();
    let push = |out: &mut String, s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    push(&mut out, "# HELP vllm:num_requests_running Number of requests in model execution batches.".into());
    push(&mut out, "# TYPE vllm:num_requests_running gauge".into());
    for (model, engine, running) in [("llama", "0", 30.0), ("llama", "1", 34.0), ("qwen", "0", 5.0)] {
        push(&mut out, format!("vllm:num_requests_running{{engine=\"{engine}\",model_name=\"{model}\"}} {running}"));
    }
    push(&mut out, "# TYPE vllm:num_requests_waiting gauge".into());
    for (model, engine) in [("llama", "0"), ("llama", "1"), ("qwen", "0")] {
        push(&mut out, format!("vllm:num_requests_waiting{{engine=\"{engine}\",model_name=\"{model}\"}} {waiting}"));
    }
    push(&mut out, "# TYPE vllm:kv_cache_usage_perc gauge".into());
    for (model, engine, kv) in [("llama", "0", 0.5), ("llama", "1", 0.7), ("qwen", "0", 0.1)] {
        push(&mut out, format!("vllm:kv_cache_usage_perc{{engine=\"{engine}\",model_name=\"{model}\"}} {kv}"));
    }
    push(&mut out, "# HELP vllm:request_success_total Count of successfully processed requests.".into());
    push(&mut out, "# TYPE vllm:request_success_total counter".into());
    for (model, engine) in [("llama", "0"), ("llama", "1"), ("qwen", "0")] {
        for (reason, share) in [("stop", 0.75), ("length", 0.25)] {
            push(
                &mut out,
                format!(
                    "vllm:request_success_total{{engine=\"{engine}\",finished_reason=\"{reason}\",model_name=\"{model}\"}} {}",
                    n * 100.0 * share
                ),
            );
        }
    }
    push(&mut out, "# HELP vllm:request_success_created Count of successfully processed requests.".into());
    push(&mut out, "# TYPE vllm:request_success_created gauge".into());
    push(
        &mut out,
        "vllm:request_success_created{engine=\"0\",finished_reason=\"stop\",model_name=\"llama\"} 1.7e9".into(),
    );
    push(&mut out, "# TYPE vllm:generation_tokens_total counter".into());
    push(&mut out, format!("vllm:generation_tokens_total{{engine=\"0\",model_name=\"llama\"}} {}", n * 20000.0));
    push(&mut out, "# TYPE vllm:e2e_request_latency_seconds histogram".into());
    for (model, engine) in [("llama", "0"), ("llama", "1"), ("qwen", "0")] {
        let labels = format!("engine=\"{engine}\",model_name=\"{model}\"");
        for (le, share) in [("1.0", 0.1), ("5.0", 0.6), ("10.0", 0.9), ("+Inf", 1.0)] {
            push(
                &mut out,
                format!("vllm:e2e_request_latency_seconds_bucket{{{labels},le=\"{le}\"}} {}", n * 100.0 * share),
            );
        }
        push(&mut out, format!("vllm:e2e_request_latency_seconds_count{{{labels}}} {}", n * 100.0));
        push(&mut out, format!("vllm:e2e_request_latency_seconds_sum{{{labels}}} {}", n * 100.0 * 4.0));
    }
    out
}

fn at(t_s: f64, text: &str) -> Sample {
    Sample { t_s, scrape: parse(text).unwrap() }
}

#[test]
fn engines_of_a_model_add_up_and_models_stay_apart() {
    let s = parse(&scrape(1.0, 2.0)).unwrap();
    let llama = &s.models["llama"];
    assert_eq!(llama.engines.len(), 2);
    assert_eq!(llama.gauges[&kneelab_probe::Gauge::Running], 64.0);
    assert_eq!(llama.gauges[&kneelab_probe::Gauge::Waiting], 4.0);
    assert!((llama.gauges[&kneelab_probe::Gauge::KvCacheUsage] - 0.6).abs() < 1e-12, "KV usage is the engines' mean");
    assert_eq!(llama.counters[&kneelab_probe::Counter::RequestSuccess], 200.0, "finished reasons and engines add up");
    assert_eq!(s.models["qwen"].gauges[&kneelab_probe::Gauge::Running], 5.0);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn a_window_gives_rates_quantiles_and_littles_law() {
    let window = [at(0.0, &scrape(1.0, 2.0)), at(30.0, &scrape(4.0, 2.0)), at(60.0, &scrape(7.0, 2.0))];
    let r = analyse(&window, "llama");
    // 2 engines x 100 x 6 more over 60 s.
    assert_eq!(r.request_rate_rps, Some(20.0));
    assert_eq!(r.generation_tokens_per_s, Some(2000.0));
    let e2e = r.e2e.unwrap();
    assert_eq!(e2e.observations, 1200.0);
    assert!((e2e.mean_s - 4.0).abs() < 1e-12);
    // Rank 0.99 x 1200 = 1188 is past the 10 s bound (1080): Prometheus answers 10.
    assert_eq!(e2e.p99.unwrap().value, 10.0);
    // Rank 600 in (1, 5]: 1 + 4 x (600 - 120) / 600.
    assert!((e2e.p50.unwrap().value - (1.0 + 4.0 * 480.0 / 600.0)).abs() < 1e-12);
    // In flight 64 + 4 = 68 against 20 rps x 4 s = 80.
    let law = r.littles_law_replica.unwrap();
    assert_eq!((law.l, law.predicted), (68.0, 80.0));
    assert!((law.rel_error - (68.0 / 80.0 - 1.0)).abs() < 1e-12);
    assert_eq!(r.waiting.unwrap().trend, Trend::Flat);
    assert!(
        r.warnings.iter().any(|w| w.starts_with("missing vllm:time_to_first_token_seconds: no TTFT")),
        "{:?}",
        r.warnings
    );
    assert_eq!(analyse_all(&window).len(), 2);
}

#[test]
fn a_growing_queue_is_called_growing() {
    let window: Vec<Sample> =
        (0..7).map(|i| at(f64::from(i) * 10.0, &scrape(1.0 + f64::from(i), 3.0 * f64::from(i)))).collect();
    let r = analyse(&window, "llama");
    let w = r.waiting.unwrap();
    assert_eq!(w.trend, Trend::Growing);
    assert!((w.slope_per_s - 0.6).abs() < 1e-9, "two engines of 3 per 10 s: {}", w.slope_per_s);
    assert_eq!(w.max, 36.0);
}

#[test]
fn a_restart_counts_from_zero_and_says_so() {
    // 1 -> 4, then the server restarts and counts 0 -> 2 (read at 2).
    let window = [at(0.0, &scrape(1.0, 0.0)), at(30.0, &scrape(4.0, 0.0)), at(60.0, &scrape(2.0, 0.0))];
    let r = analyse(&window, "llama");
    assert_eq!(r.request_rate_rps, Some((600.0 + 400.0) / 60.0));
    assert!(
        r.warnings.iter().any(|w| w.starts_with("vllm:request_success_total fell 60 s into the window")),
        "{:?}",
        r.warnings
    );
    assert!(r.warnings.iter().any(|w| w.contains("_count fell")), "{:?}", r.warnings);
    assert_eq!(r.e2e.unwrap().observations, 1000.0);
}

#[test]
fn one_scrape_says_it_needs_two() {
    let r = analyse(&[at(0.0, &scrape(1.0, 0.0))], "llama");
    assert_eq!(r.request_rate_rps, None);
    assert!(r.warnings[0].starts_with("one scrape so far"), "{:?}", r.warnings);
    assert_eq!(r.running.unwrap().last, 64.0);
}

#[test]
fn odd_histograms_are_warned_about() {
    let rows = [
        ("le=\"+Inf\"", "le=\"20.0\"", "no le=\"+Inf\" bucket"),
        ("le=\"5.0\"} 60", "le=\"5.0\"} 5", "bucket counts fall as le rises"),
    ];
    for (from, to, want) in rows {
        let text = scrape(1.0, 0.0).replace(from, to);
        let s = parse(&text).unwrap();
        assert!(s.warnings.iter().any(|w| w.contains(want)), "{want}: {:?}", s.warnings);
    }
}

#[test]
fn what_is_not_a_vllm_scrape_is_named() {
    let expected = "expected Prometheus text format";
    let rows = [
        ("<!DOCTYPE html><html><body>Grafana</body></html>", "got an HTML page"),
        ("{\"status\": \"ok\"}", "got JSON"),
        ("", "got an empty page"),
        ("hello world, this is not metrics", "got text that is not in that format"),
    ];
    for (text, want) in rows {
        let e = parse(text).unwrap_err().message;
        assert!(e.starts_with(expected) && e.contains(want), "{text:?}: {e}");
    }
    let e = parse("# TYPE up gauge\nup 1\n").unwrap_err().message;
    assert!(e.starts_with("no vLLM metrics"), "{e}");
}

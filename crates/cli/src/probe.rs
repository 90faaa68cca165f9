//! `kneelab probe URL`: a real vLLM replica read from its `/metrics` over a sliding window of
//! scrapes: rates, latency quantiles as Prometheus's `histogram_quantile` gives them, the
//! gauges' mean, max and trend, Little's Law on the measured numbers and, with `--config`, the
//! replica's place on its simulated knee.
//!
//! The judging is kneelab-probe's and is pure; this module only fetches, keeps the window and
//! prints. It reads the wall clock (for when each scrape was taken) and nothing else leaves the
//! machine but the GET of the URL given.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use kneelab_probe::{
    GaugeStats, Latency, Law, OnKnee, Report, Sample, Trend, Zone, analyse, check_peak, models, on_knee,
};
use kneelab_sim::Sweep;
use kneelab_sim::sweep::DEFAULT_ATTAINMENT_TARGET;
use serde::Serialize;

use crate::error::{CliError, warn};
use crate::input;
use crate::sweep::{DEFAULT_LOADS, parse_loads, sweep_config};
use crate::wall::WallClock;

/// The most scrapes a window may hold: memory stays bounded whatever the flags.
pub const MAX_WINDOW_SCRAPES: u64 = 10_000;
/// The largest `/metrics` page read; a larger answer is cut off there and said.
const MAX_BODY_BYTES: u64 = 32 << 20;

const AFTER_HELP: &str = "\
Examples:
  kneelab probe http://localhost:8000/metrics                    every 5 s over a 60 s window, live
  kneelab probe localhost:8000 --interval 2s --window 2m         the path defaults to /metrics
  kneelab probe http://vllm:8000/metrics --config examples/rag.json --peak-qps 100
      your workload and engine: where the measured rate sits on the simulated knee, the binding
      limit, and the replicas a peak of 100 req/s needs
  kneelab probe http://localhost:8000/metrics --format json --count 13 | tail -1
      one JSON object per scrape; stop after 13 scrapes

Each scrape is a plain HTTP GET of URL; nothing else leaves the machine. Over the window (the
scrapes of the last --window), counters become rates by the rule of Prometheus's increase() (a
counter that falls has restarted from zero), histograms become quantiles of their buckets'
increases, computed as histogram_quantile computes them: a quantile is interpolated inside its
bucket, so it is only as exact as the buckets (the bucket is printed beside it). Gauges are
judged over the window (mean, max, trend), never from one scrape. Little's Law is checked for
the batch (num_requests_running = rate x time in the batch) and for the replica (running +
waiting = rate x E2E). Several models (model_name) are reported one by one; the data-parallel
engines of a model (engine label) are added together, and placed on the knee one engine each.
A failed scrape (the server gone, not Prometheus text, an HTTP error) is one warning on stderr;
the window keeps its scrapes and the probe goes on.";

/// Output format of `kneelab probe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable block per scrape; on a terminal it is redrawn in place.
    Text,
    /// One JSON object per scrape, one per line.
    Json,
}

/// Scrape a vLLM server's /metrics over a window and say what it shows.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct ProbeArgs {
    /// The Prometheus endpoint, as http://HOST:PORT/metrics (HOST:PORT alone means that).
    #[arg(value_name = "URL")]
    url: String,
    /// Time between scrapes: 500ms, 5s, 1m (a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    interval: String,
    /// How far back the window reaches: 30s, 1m, 5m.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    window: String,
    /// Stop after this many scrapes (by default the probe runs until interrupted).
    #[arg(long, value_name = "N")]
    count: Option<u64>,
    /// Report only this model_name.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Your replica as a kneelab config (workload, engine, GPU preset, SLOs): swept once at the
    /// start, to place the measured rate on its knee.
    #[arg(long, value_name = "CONFIG")]
    config: Option<PathBuf>,
    /// With --config: the peak request rate a fleet of such replicas must serve, to size it.
    #[arg(long, value_name = "Q", requires = "config", allow_negative_numbers = true)]
    peak_qps: Option<f64>,
    /// The server's seconds per real second: for a `kneelab serve-metrics --speed X`, give the
    /// same X, so rates are per simulated second like its latencies (a real server is 1).
    #[arg(long, value_name = "X", default_value_t = 1.0, allow_negative_numbers = true)]
    speed: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// What `probe` prints for one scrape, as JSON.
#[derive(Debug, Serialize)]
struct Tick<'a> {
    /// Scrapes attempted so far, this one included.
    scrape: u64,
    /// When this scrape was taken, in Unix seconds.
    t_unix_s: f64,
    /// Whether it was read.
    ok: bool,
    /// Why not, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The URL scraped.
    url: &'a str,
    /// The window's length as asked for.
    window_s: f64,
    /// One report per model, with its place on the knee under --config.
    models: Vec<ModelTick>,
}

#[derive(Debug, Serialize)]
struct ModelTick {
    #[serde(flatten)]
    report: Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    knee: Option<OnKnee>,
}

/// The config swept for `--config`.
struct Knee {
    source: String,
    sweep: Sweep,
    max_num_seqs: u32,
}

/// Probes until `--count` scrapes are done, or forever.
pub fn run(args: &ProbeArgs) -> Result<String, CliError> {
    let url = metrics_url(&args.url)?;
    let interval = duration("--interval", &args.interval)?;
    let window = duration("--window", &args.window)?;
    if interval > Duration::from_secs(3600) {
        return Err(CliError::input(format!("--interval: at most 1h, got {}", args.interval)));
    }
    if window < interval {
        return Err(CliError::input(format!(
            "--window: must hold at least two scrapes, so at least --interval ({}), got {}",
            args.interval, args.window
        )));
    }
    if window.as_secs_f64() / interval.as_secs_f64() > MAX_WINDOW_SCRAPES as f64 {
        return Err(CliError::input(format!(
            "--window: holds at most {MAX_WINDOW_SCRAPES} scrapes of --interval, got {} / {}",
            args.window, args.interval
        )));
    }
    if !(args.speed.is_finite() && args.speed > 0.0 && args.speed <= crate::serve_metrics::MAX_SPEED) {
        return Err(CliError::input(format!(
            "--speed: must be above 0 and at most {} (the server's seconds per real second), got {}",
            crate::serve_metrics::MAX_SPEED,
            args.speed
        )));
    }
    if args.count == Some(0) {
        return Err(CliError::input("--count: must be at least 1"));
    }
    if args.model.as_ref().is_some_and(|m| m.trim().is_empty()) {
        return Err(CliError::input("--model: must not be empty"));
    }
    if let Some(peak) = args.peak_qps {
        check_peak(peak).map_err(|e| CliError::input(format!("--peak-qps: {}", e.message)))?;
    }
    let knee = match &args.config {
        Some(path) => {
            let loaded = input::load(path)?;
            let loads = parse_loads(DEFAULT_LOADS)?;
            let sweep = sweep_config(&loaded.config, &loaded.source, &loads, DEFAULT_ATTAINMENT_TARGET)?;
            Some(Knee { source: loaded.source, sweep, max_num_seqs: loaded.config.engine.max_num_seqs })
        }
        None => None,
    };

    let agent = ureq::AgentBuilder::new()
        .timeout(interval.min(Duration::from_secs(10)).max(Duration::from_millis(200)))
        .redirects(0)
        .build();
    let live = args.format == Format::Text && io::stdout().is_terminal();
    let clock = WallClock::start();
    let mut window_scrapes: VecDeque<Sample> = VecDeque::new();
    let mut failing_since: Option<u64> = None;
    let mut out = io::stdout().lock();
    for n in 1u64.. {
        clock.sleep_until(interval.mul_f64((n - 1) as f64));
        let t_s = clock.elapsed_s();
        let t_unix_s = WallClock::unix_s();
        let error = match fetch(&agent, &url) {
            Ok(scrape) => {
                if let Some(since) = failing_since.take() {
                    warn(&format!("{url} answers again (scrape {n}); it failed from scrape {since}"));
                }
                // On the server's clock, so rates are per second of the latencies' seconds.
                window_scrapes.push_back(Sample { t_s: t_s * args.speed, scrape });
                None
            }
            Err(message) => {
                failing_since.get_or_insert(n);
                warn(&format!(
                    "scrape {n}: {url}: {message}; the window keeps its {} scrape(s), next try in {}",
                    window_scrapes.len(),
                    args.interval
                ));
                Some(message)
            }
        };
        while window_scrapes.front().is_some_and(|s| s.t_s < (t_s - window.as_secs_f64()) * args.speed - 1e-9) {
            window_scrapes.pop_front();
        }
        let samples = window_scrapes.make_contiguous();
        let names: Vec<String> = match &args.model {
            Some(m) => vec![m.clone()],
            None => models(samples).into_iter().collect(),
        };
        let ticks: Vec<ModelTick> = names
            .iter()
            .map(|name| {
                let report = analyse(samples, name);
                let knee = knee.as_ref().and_then(|k| on_knee(&report, &k.sweep, k.max_num_seqs, args.peak_qps));
                ModelTick { report, knee }
            })
            .collect();
        let tick = Tick {
            scrape: n,
            t_unix_s,
            ok: error.is_none(),
            error,
            url: &url,
            window_s: window.as_secs_f64(),
            models: ticks,
        };
        let text = match args.format {
            Format::Json => {
                serde_json::to_string(&tick).map(|j| j + "\n").map_err(|e| CliError::input(e.to_string()))?
            }
            Format::Text => text(&tick, knee.as_ref(), args, live),
        };
        match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(String::new()),
            Err(e) => return Err(CliError::output(&e)),
            Ok(()) => {}
        }
        if args.count.is_some_and(|c| n >= c) {
            break;
        }
    }
    Ok(String::new())
}

/// The URL to scrape: `http://` is assumed, and a bare host:port means its `/metrics`.
fn metrics_url(given: &str) -> Result<String, CliError> {
    let given = given.trim();
    if given.is_empty() {
        return Err(CliError::input("URL: must not be empty; give the server's /metrics, as http://HOST:8000/metrics"));
    }
    let with_scheme = if given.contains("://") { given.to_string() } else { format!("http://{given}") };
    let Some(rest) = with_scheme.strip_prefix("http://") else {
        let scheme = with_scheme.split("://").next().unwrap_or("");
        return Err(CliError::input(format!(
            "URL {given}: the probe speaks plain http:// (vLLM serves /metrics over HTTP), not {scheme}://"
        )));
    };
    let (host, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
    if host.is_empty() {
        return Err(CliError::input(format!("URL {given}: no host; give it as http://HOST:PORT/metrics")));
    }
    Ok(if path.is_empty() { format!("http://{host}/metrics") } else { format!("http://{host}/{path}") })
}

/// A duration flag: `500ms`, `5s`, `2m`, `1h`, or a bare number of seconds.
fn duration(flag: &str, text: &str) -> Result<Duration, CliError> {
    let t = text.trim();
    let parsed = match t.parse::<f64>() {
        Ok(s) => Duration::try_from_secs_f64(s).ok(),
        Err(_) => humantime::parse_duration(t).ok(),
    };
    match parsed {
        Some(d) if d >= Duration::from_millis(100) => Ok(d),
        Some(_) => Err(CliError::input(format!("{flag}: at least 100ms, got {text}"))),
        None => Err(CliError::input(format!("{flag}: want a duration such as 500ms, 5s or 1m, got \"{text}\""))),
    }
}

/// GETs and parses one scrape; the error is one line naming what went wrong.
fn fetch(agent: &ureq::Agent, url: &str) -> Result<kneelab_probe::Scrape, String> {
    let response = match agent.get(url).call() {
        Ok(r) => r,
        Err(ureq::Error::Status(code, r)) => {
            return Err(format!("HTTP {code} {}; is this the server's /metrics?", r.status_text()));
        }
        Err(ureq::Error::Transport(t)) => {
            let detail =
                t.message().map(str::to_string).or_else(|| std::error::Error::source(&t).map(|s| s.to_string()));
            return Err(format!(
                "cannot reach it ({}{})",
                t.kind(),
                detail.map(|d| format!(": {d}")).unwrap_or_default()
            ));
        }
    };
    let mut body = String::new();
    let read = response.into_reader().take(MAX_BODY_BYTES).read_to_string(&mut body);
    read.map_err(|e| format!("the answer was cut off or is not text: {e}"))?;
    kneelab_probe::parse(&body).map_err(|e| e.message)
}

// ---------------------------------------------------------------------------------------------
// The text view.

fn text(tick: &Tick<'_>, knee: Option<&Knee>, args: &ProbeArgs, live: bool) -> String {
    let mut out = String::new();
    if live {
        // Home and clear: the view is redrawn in place.
        out.push_str("\x1b[H\x1b[2J");
    }
    let mut line = |s: String| {
        let _ = writeln!(out, "{s}");
    };
    let status = match &tick.error {
        None => "ok".to_string(),
        Some(e) => format!("FAILED: {e}"),
    };
    line(format!(
        "kneelab probe {} · scrape {} ({status}) · every {} over {}",
        tick.url, tick.scrape, args.interval, args.window
    ));
    if tick.models.is_empty() {
        line("  no vLLM scrape read yet".into());
    }
    for m in &tick.models {
        let r = &m.report;
        line(format!(
            "model {} · {} engine(s) · {} scrape(s) over {:.0} s",
            if r.model.is_empty() { "(no model_name)" } else { &r.model },
            r.engines,
            r.scrapes,
            r.window_s
        ));
        line(format!(
            "  rates       requests {} · prompt {} · generation {} · preemptions {}",
            rate(r.request_rate_rps, "req/s"),
            rate(r.prompt_tokens_per_s, "tok/s"),
            rate(r.generation_tokens_per_s, "tok/s"),
            rate(r.preemptions_per_s, "/s"),
        ));
        for (name, l) in [
            ("TTFT", r.ttft),
            ("TPOT", r.tpot),
            ("ITL", r.itl),
            ("queue", r.queue),
            ("in batch", r.inference),
            ("E2E", r.e2e),
        ] {
            let noun = if name == "ITL" { "token gaps" } else { "requests" };
            line(format!("  {name:<11} {}", latency(l, noun)));
        }
        for (name, g, pct) in
            [("running", r.running, false), ("waiting", r.waiting, false), ("KV cache", r.kv_cache_usage, true)]
        {
            line(format!("  {name:<11} {}", gauge(g, pct)));
        }
        line(format!("  Little      batch: {} · replica: {}", law(r.littles_law_batch), law(r.littles_law_replica)));
        if let (Some(k), Some(on)) = (knee, &m.knee) {
            line(format!("  knee        {}", placed(k, on)));
            if let Some(s) = &on.sizing {
                line(format!(
                    "  fleet       peak {} req/s: {} replicas at the knee ({} at saturation, too few to hold the SLOs)",
                    s.peak_qps,
                    s.replicas_at_knee.map_or("no knee: cannot size".to_string(), |n| n.to_string()),
                    s.replicas_at_saturation.map_or("?".to_string(), |n| n.to_string()),
                ));
            }
        }
        for w in &r.warnings {
            line(format!("  warning     {w}"));
        }
    }
    if !live {
        line(String::new());
    }
    out
}

fn rate(v: Option<f64>, unit: &str) -> String {
    v.map_or("-".to_string(), |v| format!("{} {unit}", sig(v)))
}

/// A number to three significant figures, no exponent.
fn sig(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn secs(v: f64) -> String {
    if v.is_infinite() {
        "+Inf".into()
    } else if v < 1.0 {
        format!("{} ms", sig(v * 1e3))
    } else {
        format!("{} s", sig(v))
    }
}

fn latency(l: Option<Latency>, noun: &str) -> String {
    let Some(l) = l else { return "-".into() };
    let q = |q: Option<kneelab_probe::Quantile>| q.map_or("-".to_string(), |q| secs(q.value));
    let bucket = l.p99.map_or(String::new(), |q| {
        if q.upper.is_infinite() {
            format!(" (p99 past the last bucket, {}: at least that)", secs(q.lower))
        } else {
            format!(" (p99 in bucket {}..{})", secs(q.lower.max(0.0)), secs(q.upper))
        }
    });
    format!(
        "p50 {} · p90 {} · p99 {} · mean {}, {} {noun}{bucket}",
        q(l.p50),
        q(l.p90),
        q(l.p99),
        secs(l.mean_s),
        sig(l.observations)
    )
}

fn gauge(g: Option<GaugeStats>, pct: bool) -> String {
    let Some(g) = g else { return "-".into() };
    let v = |x: f64| if pct { format!("{:.0}%", x * 100.0) } else { sig(x) };
    let trend = match g.trend {
        Trend::Growing => format!("GROWING ({}/s)", v(g.slope_per_s)),
        Trend::Falling => format!("falling ({}/s)", v(g.slope_per_s)),
        Trend::Flat => "flat".into(),
    };
    format!("mean {} · max {} · now {} · {trend}", v(g.mean), v(g.max), v(g.last))
}

fn law(l: Option<Law>) -> String {
    l.map_or("-".to_string(), |l| {
        format!(
            "{} vs {} x {} = {} ({:+.1}%)",
            sig(l.l),
            sig(l.lambda_rps),
            secs(l.w_s),
            sig(l.predicted),
            l.rel_error * 100.0
        )
    })
}

fn placed(k: &Knee, on: &OnKnee) -> String {
    let p = &on.placement;
    let knee = on.knee_rps.map_or("no knee in the sweep".to_string(), |r| format!("knee {} req/s", sig(r)));
    let where_ = match p.zone {
        Zone::BelowKnee => "below the knee",
        Zone::AtKnee => "AT THE KNEE: run just below it at peak",
        Zone::PastKnee => "PAST THE KNEE: latency SLOs are being lost",
        Zone::Saturated => "AT SATURATION: the queue grows without bound",
    };
    let load = p.offered_load.map_or("at or past saturation".to_string(), |l| format!("offered load {l:.2}"));
    format!(
        "{} per engine on {}: {load}, {} of the knee; {knee}, saturation {} req/s; {where_}; {} binds",
        rate(Some(on.rate_per_engine_rps), "req/s"),
        k.source,
        p.of_knee.map_or("-".to_string(), |f| format!("{:.0}%", f * 100.0)),
        sig(on.saturation_rps),
        on.binding
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_durations() {
        for (given, want) in [
            ("localhost:8000", "http://localhost:8000/metrics"),
            ("http://h:8000/", "http://h:8000/metrics"),
            ("http://h:8000/custom/path", "http://h:8000/custom/path"),
        ] {
            assert_eq!(metrics_url(given).unwrap(), want);
        }
        assert!(metrics_url("https://h/metrics").unwrap_err().to_string().contains("plain http://"));
        assert!(metrics_url("http:///metrics").unwrap_err().to_string().contains("no host"));
        assert_eq!(duration("--interval", "500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("--interval", "2.5").unwrap(), Duration::from_millis(2500));
        assert_eq!(duration("--window", "1m").unwrap(), Duration::from_secs(60));
        assert!(duration("--interval", "10ms").unwrap_err().to_string().starts_with("--interval: at least"));
        assert!(duration("--window", "soon").unwrap_err().to_string().starts_with("--window: want a duration"));
        assert!(duration("--window", "-3").is_err());
    }
}

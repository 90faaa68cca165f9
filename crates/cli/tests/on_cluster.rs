//! "On your cluster": `kneelab serve-metrics` served over real sockets and scraped as Prometheus
//! scrapes it, checked by promtool; `kneelab probe` against it and against broken endpoints.
#![allow(
    clippy::disallowed_methods,
    reason = "these tests live in real time: servers on threads, scrapes compared at wall-clock instants"
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The repository root, where `examples/` lives.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A `kneelab serve-metrics` process, killed when dropped.
struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    base: String,
    /// The line it printed on start.
    banner: String,
    /// When it printed it.
    started: std::time::Instant,
}

impl Served {
    /// Wall seconds since the server said it serves.
    fn age_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `kneelab serve-metrics CONFIG --port 0 args...` and waits for its start line.
fn serve(config: &str, args: &[&str]) -> Served {
    serve_on(0, config, args)
}

/// [`serve`] on `port` (0: any free one).
fn serve_on(port: u16, config: &str, args: &[&str]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kneelab"))
        .current_dir(root())
        .args(["serve-metrics", config, "--port", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kneelab runs");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    stderr.read_line(&mut banner).unwrap();
    let started = std::time::Instant::now();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::Builder::new().spawn(move || std::io::copy(&mut stderr, &mut std::io::sink())).unwrap();
    let base = banner
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://").and_then(|rest| rest.strip_suffix("/metrics")))
        .map(|host| format!("http://{host}"))
        .unwrap_or_else(|| panic!("no address in the start line: {banner}"));
    Served { child, base, banner, started }
}

/// GET `url`: the status and the body.
fn get(url: &str) -> (u16, String) {
    match ureq::get(url).call() {
        Ok(r) => (r.status(), r.into_string().unwrap()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
        Err(e) => panic!("GET {url}: {e}"),
    }
}

/// The value of the sample line of `text` that starts with `series`.
fn value(text: &str, series: &str) -> f64 {
    let line = text.lines().find(|l| l.starts_with(series)).unwrap_or_else(|| panic!("no {series} in\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// `promtool check metrics` of `text`: its exit code and what it said, or None without promtool.
fn promtool(text: &str) -> Option<(i32, String)> {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Some((out.status.code().unwrap_or(-1), said.trim().to_string()))
}

/// Sleeps `seconds` of wall time: the servers under test run on the wall clock.
fn sleep_s(seconds: f64) {
    std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
}

#[test]
fn serve_metrics_serves_vllm_metrics_that_grow_and_promtool_accepts() {
    let served = serve("examples/chat.json", &["--speed", "20"]);
    assert!(served.banner.contains("model_name \"meta-llama/Meta-Llama-3-8B-Instruct\""), "{}", served.banner);
    assert!(served.banner.contains("speed 20x"), "{}", served.banner);
    let response = ureq::get(&format!("{}/metrics", served.base)).call().unwrap();
    assert_eq!(response.header("Content-Type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    sleep_s(1.0);
    let (status, first) = get(&format!("{}/metrics", served.base));
    assert_eq!(status, 200);
    sleep_s(1.5);
    let (_, second) = get(&format!("{}/metrics", served.base));
    // Finished requests, by why: chat replies end on their own ("stop") but for the rare one cut
    // off at the workload's cap ("length").
    let success = |text: &str, reason: &str| {
        value(
            text,
            &format!(
                "vllm:request_success_total{{engine=\"0\",model_name=\"meta-llama/Meta-Llama-3-8B-Instruct\",finished_reason=\"{reason}\"}}"
            ),
        )
    };
    let finished = |text: &str| success(text, "stop") + success(text, "length") + success(text, "abort");
    let (a, b) = (finished(&first), finished(&second));
    // chat.json offers 80% of its capacity; 1.5 s of wall time at 20x is 30 simulated seconds.
    assert!(a > 0.0 && b > a, "requests finished: {a} then {b}");
    assert!(success(&second, "stop") > 0.95 * b, "most chat replies stop on their own");
    for name in [
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:num_preemptions_total",
        "vllm:prompt_tokens_total",
        "vllm:generation_tokens_total",
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:request_time_per_output_token_seconds_bucket",
        "vllm:inter_token_latency_seconds_bucket",
        "vllm:e2e_request_latency_seconds_bucket",
        "vllm:request_queue_time_seconds_bucket",
        "vllm:request_inference_time_seconds_bucket",
        "vllm:request_prefill_time_seconds_bucket",
        "vllm:request_decode_time_seconds_bucket",
    ] {
        assert!(second.contains(&format!("{name}{{")), "{name} missing");
    }
    assert_eq!(value(&second, "vllm:time_to_first_token_seconds_count"), b);

    // promtool, Prometheus's own linter (CI installs Debian's prometheus). It parses the text
    // (a parse error is exit 1) and lints it (findings are exit 3). vLLM's names carry a colon,
    // which the linter reserves for recording rules, so vLLM's own /metrics draws that finding
    // on every family; with the colon renamed there must be no finding at all.
    match promtool(&second) {
        Some((code, said)) => {
            assert_ne!(code, 1, "promtool cannot parse the text: {said}");
            assert!(said.lines().all(|l| l.ends_with("metric names should not contain ':'")), "promtool: {said}");
            let (code, said) = promtool(&second.replace("vllm:", "vllm_")).unwrap();
            assert_eq!(code, 0, "promtool finds more than the colon: {said}");
        }
        None if std::env::var_os("KNEELAB_REQUIRE_PROMTOOL").is_none() => {
            eprintln!("promtool not found: the check was skipped (set KNEELAB_REQUIRE_PROMTOOL=1 to make that fail)");
        }
        None => panic!("promtool is required (KNEELAB_REQUIRE_PROMTOOL is set) but cannot run"),
    }

    let (status, body) = get(&format!("{}/health", served.base));
    assert_eq!((status, body.as_str()), (200, ""));
    let (status, body) = get(&format!("{}/v1/models", served.base));
    assert_eq!(status, 404);
    assert!(body.contains("the metrics are at /metrics"), "{body}");
}

#[test]
fn serve_metrics_follows_a_traffic_curve() {
    // examples/day.json: a diurnal day of 3,600 s, its trough (0.2x) at 0 and its peak at 1,800 s,
    // served 600x faster: a day in six seconds.
    let served = serve("examples/day.json", &["--speed", "600"]);
    assert!(served.banner.contains("times a 3600 s day, its trough at 0.2x over time"), "{}", served.banner);
    let success = "vllm:request_success_total{engine=\"0\",model_name=\"meta-llama/Meta-Llama-3-8B-Instruct\",finished_reason=\"stop\"}";
    let mut counts = Vec::new();
    for wall_s in [0.5, 1.0, 2.5, 3.0] {
        sleep_s((wall_s - served.age_s()).max(0.0));
        counts.push(value(&get(&format!("{}/metrics", served.base)).1, success));
    }
    // Simulated 300-600 s (factor about 0.3) against 1,500-1,800 s (about 1): about 3x the requests.
    let (early, peak) = (counts[1] - counts[0], counts[3] - counts[2]);
    eprintln!("day.json served at 600x: {early} requests finished in simulated 300-600 s, {peak} in 1,500-1,800 s");
    assert!(peak > 2.0 * early && early > 0.0, "finished: {early} early in the day, {peak} near its peak");
}

#[test]
fn serve_metrics_says_what_is_wrong_with_its_flags() {
    for (args, said) in [
        (vec!["--speed", "0"], "kneelab: error: --speed: must be above 0 and at most 1000"),
        (vec!["--speed", "5000"], "kneelab: error: --speed: must be above 0 and at most 1000"),
        (vec!["--model", " "], "kneelab: error: --model: must not be empty"),
        (vec!["--tick", "0"], "kneelab: error: --tick: must be from 0.01 to 3600"),
        (vec!["--host", "no such host.invalid"], "kneelab: error: --host no such host.invalid: "),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kneelab"))
            .current_dir(root())
            .args(["serve-metrics", "examples/chat.json", "--port", "0"])
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(said), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // A taken port names the flag and the way out.
    let served = serve("examples/chat.json", &[]);
    let port = served.base.rsplit(':').next().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kneelab"))
        .current_dir(root())
        .args(["serve-metrics", "examples/chat.json", "--port", port])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("--port {port}: ")) && stderr.contains("already in use"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// `kneelab probe`

/// What a scripted endpoint answers to one GET.
#[derive(Clone)]
enum Answer {
    /// A 200 with this body.
    Page(String),
    /// Not there at all (connection refused) for this long, then back on the same port.
    Gone(f64),
}

/// An endpoint that answers its GETs in order from a script, the last answer repeating.
fn scripted(script: Vec<Answer>) -> String {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut listener = Some(listener);
        let mut i = 0;
        loop {
            let answer = script[i.min(script.len() - 1)].clone();
            i += 1;
            match answer {
                Answer::Gone(seconds) => {
                    drop(listener.take());
                    sleep_s(seconds);
                    listener = Some(TcpListener::bind(addr).unwrap());
                }
                Answer::Page(body) => {
                    let Ok((mut stream, _)) = listener.as_ref().unwrap().accept() else { return };
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                        head.push(byte[0]);
                    }
                    let kind = if body.starts_with('<') { "text/html" } else { "text/plain; version=0.0.4" };
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
            }
        }
    });
    format!("http://{addr}/metrics")
}

/// A vLLM scrape after `n` requests of 1 s each (TTFT 0.2 s), with or without the TTFT histogram.
fn vllm_scrape(n: f64, ttft: bool) -> String {
    let labels = "engine=\"0\",model_name=\"m\"";
    let mut s = format!(
        "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{{labels}}} 4\n\
         # TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{{labels}}} 0\n\
         # TYPE vllm:request_success_total counter\nvllm:request_success_total{{{labels},finished_reason=\"stop\"}} {n}\n\
         # TYPE vllm:e2e_request_latency_seconds histogram\n\
         vllm:e2e_request_latency_seconds_bucket{{{labels},le=\"0.5\"}} 0\n\
         vllm:e2e_request_latency_seconds_bucket{{{labels},le=\"2.0\"}} {n}\n\
         vllm:e2e_request_latency_seconds_bucket{{{labels},le=\"+Inf\"}} {n}\n\
         vllm:e2e_request_latency_seconds_count{{{labels}}} {n}\nvllm:e2e_request_latency_seconds_sum{{{labels}}} {n}\n"
    );
    if ttft {
        s += &format!(
            "# TYPE vllm:time_to_first_token_seconds histogram\n\
             vllm:time_to_first_token_seconds_bucket{{{labels},le=\"0.1\"}} 0\n\
             vllm:time_to_first_token_seconds_bucket{{{labels},le=\"0.25\"}} {n}\n\
             vllm:time_to_first_token_seconds_bucket{{{labels},le=\"+Inf\"}} {n}\n\
             vllm:time_to_first_token_seconds_count{{{labels}}} {n}\nvllm:time_to_first_token_seconds_sum{{{labels}}} {}\n",
            n * 0.2
        );
    }
    s
}

/// Runs `kneelab probe URL args...`: exit code, the JSON lines of stdout, stderr.
fn probe(url: &str, args: &[&str]) -> (Option<i32>, Vec<serde_json::Value>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kneelab"))
        .current_dir(root())
        .args(["probe", url, "--format", "json"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines = stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    (out.status.code(), lines, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn probe_names_each_fault_and_recovers() {
    let page = |n: f64| Answer::Page(vllm_scrape(n, true));
    let url = scripted(vec![
        page(100.0),
        page(110.0),
        Answer::Page("<!doctype html><html><body>Grafana</body></html>".into()),
        page(130.0),
        Answer::Gone(0.9),
        page(150.0),
        // The server restarts: its counters begin again from zero.
        page(5.0),
        page(15.0),
        Answer::Page(vllm_scrape(25.0, false)),
        page(35.0),
    ]);
    // The last page repeats, so however many scrapes fall in the gap, every page is read by the 13th.
    let (code, ticks, stderr) = probe(&url, &["--interval", "0.4s", "--window", "60s", "--count", "13"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(ticks.len(), 13, "one line per scrape, failed ones too");
    let warning = |needle: &str| stderr.lines().find(|l| l.contains(needle)).map(str::to_string);
    // Not Prometheus text: named, and the next scrape is read.
    let html = warning("scrape 3:").unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        html.starts_with("kneelab: warning: scrape 3: ") && html.contains("expected Prometheus text format"),
        "{html}"
    );
    assert!(html.contains("got an HTML page"), "{html}");
    assert_eq!(ticks[2]["ok"], false);
    assert_eq!(ticks[3]["ok"], true);
    // Gone mid-window: named, and said again when it answers.
    let gone = stderr.lines().filter(|l| l.contains("cannot reach it")).count();
    assert!(gone >= 1, "{stderr}");
    assert!(warning("answers again").is_some(), "{stderr}");
    // The reset: the window says the server restarted, and the rate counts from zero there.
    let last = &ticks[12]["models"][0];
    let warnings: Vec<&str> = last["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert!(warnings.iter().any(|w| w.starts_with("vllm:request_success_total fell")), "{warnings:?}");
    // Increases: 10 + 20 (to 130 over the failed scrape) + 20, then 5 from zero, +10 +10 +10.
    let rate = last["request_rate_rps"].as_f64().unwrap();
    let window_s = last["window_s"].as_f64().unwrap();
    assert!((rate * window_s - 85.0).abs() < 1e-6, "increase {}", rate * window_s);
    // A missing metric: the scrape without TTFT is read (only the page and the gap failed), and
    // the histogram is judged on the rest.
    assert_eq!(ticks.iter().filter(|t| t["ok"] == false).count(), 1 + gone, "{stderr}");
    assert!(last["ttft"]["p99"]["value"].as_f64().unwrap() > 0.1, "{}", last["ttft"]);
    let url = scripted(vec![Answer::Page(vllm_scrape(10.0, false)), Answer::Page(vllm_scrape(20.0, false))]);
    let (_, ticks, _) = probe(&url, &["--interval", "0.2s", "--count", "2"]);
    let warnings = ticks[1]["models"][0]["warnings"].to_string();
    assert!(warnings.contains("missing vllm:time_to_first_token_seconds: no TTFT"), "{warnings}");
    assert!(ticks[1]["models"][0]["ttft"].is_null());
}

#[test]
fn probe_says_what_is_wrong_with_its_flags() {
    for (args, said) in [
        (vec!["https://h/metrics"], "kneelab: error: URL https://h/metrics: the probe speaks plain http://"),
        (vec!["h:1", "--interval", "10ms"], "kneelab: error: --interval: at least 100ms"),
        (vec!["h:1", "--interval", "soon"], "kneelab: error: --interval: want a duration"),
        (vec!["h:1", "--interval", "5s", "--window", "2s"], "kneelab: error: --window: must hold at least two"),
        (vec!["h:1", "--interval", "100ms", "--window", "24h"], "kneelab: error: --window: holds at most 10000"),
        (vec!["h:1", "--count", "0"], "kneelab: error: --count: must be at least 1"),
        (vec!["h:1", "--speed", "0"], "kneelab: error: --speed: must be above 0"),
        (vec!["h:1", "--config", "examples/chat.json", "--peak-qps", "-1"], "kneelab: error: --peak-qps: must be"),
        (vec!["h:1", "--config", "no-such.json"], "kneelab: error: no-such.json: cannot read the config"),
    ] {
        let out =
            Command::new(env!("CARGO_BIN_EXE_kneelab")).current_dir(root()).arg("probe").args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(said), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// The load at which `kneelab sweep CONFIG`'s throughput reaches `rate`, read off its JSON by
/// linear interpolation from the origin.
fn swept_load_at(config: &str, rate: f64) -> f64 {
    let out = Command::new(env!("CARGO_BIN_EXE_kneelab")).current_dir(root()).args(["sweep", config]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sweep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut prev = (0.0, 0.0);
    for p in sweep["points"].as_array().unwrap() {
        let (load, x) = (p["offered_load"].as_f64().unwrap(), p["summary"]["throughput_rps"].as_f64().unwrap());
        if x >= rate {
            return prev.0 + (load - prev.0) * (rate - prev.1) / (x - prev.1);
        }
        prev = (load, x);
    }
    panic!("{rate} req/s is past the sweep's throughput");
}

#[test]
fn probe_places_a_served_replica_on_its_simulated_knee() {
    // chat.json offers 80% of its capacity; served 50x faster than real time.
    let served = serve("examples/chat.json", &["--speed", "50"]);
    let (code, ticks, stderr) = probe(
        &format!("{}/metrics", served.base),
        &[
            "--speed",
            "50",
            "--interval",
            "0.5s",
            "--window",
            "10s",
            "--count",
            "32",
            "--config",
            "examples/chat.json",
            "--peak-qps",
            "100",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let last = &ticks[31]["models"][0];
    let rate = last["request_rate_rps"].as_f64().unwrap();
    let knee = &last["knee"];
    let placed = knee["placement"]["offered_load"].as_f64().unwrap();
    let swept = swept_load_at("examples/chat.json", rate);
    eprintln!(
        "measured {rate:.3} req/s over {:.0} simulated s: probe places it at load {placed:.4}, the sweep at {swept:.4}",
        last["window_s"]
    );
    assert!((placed / swept - 1.0).abs() < 0.05, "probe {placed} vs sweep {swept}");
    assert!((placed / 0.8 - 1.0).abs() < 0.05, "served at 0.8, placed at {placed}");
    assert_eq!(knee["placement"]["zone"], "below_knee", "{knee}");
    assert_eq!(knee["limits"]["binding"], "seq_cap", "chat hits the sequence cap: {knee}");
    let replicas = knee["sizing"]["replicas_at_knee"].as_u64().unwrap();
    let knee_rps = knee["knee_rps"].as_f64().unwrap();
    assert_eq!(replicas, (100.0 / knee_rps).ceil() as u64);
    // Little's Law holds on the measured numbers (at the served speed, rates and times agree),
    // within what 21 instantaneous readings of a gauge can say about its mean.
    let law = last["littles_law_batch"]["rel_error"].as_f64().unwrap();
    assert!(law.abs() < 0.2, "batch Little's Law off by {law}");
}

/// A Prometheus server scraping `target` (host:port) every second, killed when dropped.
struct Prometheus {
    child: Child,
    api: String,
    _dir: TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A port free right now on the loopback.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts Debian's `prometheus` scraping `target`, or None where it is not installed (and
/// KNEELAB_REQUIRE_PROMETHEUS is unset: CI sets it).
fn prometheus(target: &str) -> Option<Prometheus> {
    let found = Command::new("prometheus").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("KNEELAB_REQUIRE_PROMETHEUS").is_none(),
            "prometheus is required (KNEELAB_REQUIRE_PROMETHEUS is set) but cannot run"
        );
        eprintln!("prometheus not found: the check was skipped (set KNEELAB_REQUIRE_PROMETHEUS=1 to make that fail)");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("kneelab-prometheus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = TempDir(dir);
    let config = dir.0.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n\
             scrape_configs:\n  - job_name: vllm\n    metrics_path: /metrics\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let mut child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.0.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus starts");
    let api = format!("http://127.0.0.1:{port}/api/v1");
    for _ in 0..100 {
        if ureq::get(&format!("http://127.0.0.1:{port}/-/ready")).call().is_ok() {
            return Some(Prometheus { child, api, _dir: dir });
        }
        sleep_s(0.2);
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("prometheus did not become ready on port {port}");
}

/// The wall clock, in Unix seconds.
fn now_unix_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
}

impl Prometheus {
    /// The one value of an instant `query` at Unix time `t`.
    fn query(&self, query: &str, t: f64) -> f64 {
        self.query_opt(query, t).unwrap_or_else(|| panic!("{query}: no result"))
    }

    /// The one value of an instant `query` at Unix time `t`, or None when it has no result yet.
    fn query_opt(&self, query: &str, t: f64) -> Option<f64> {
        let body = ureq::get(&format!("{}/query", self.api))
            .query("query", query)
            .query("time", &format!("{t:.3}"))
            .call()
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .into_string()
            .unwrap();
        let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
        let result = answer["data"]["result"].as_array().unwrap_or_else(|| panic!("{query}: {body}"));
        assert!(result.len() <= 1, "{query}: {body}");
        Some(result.first()?["value"][1].as_str().unwrap().parse().unwrap())
    }
}

#[test]
fn probe_agrees_with_prometheus_on_the_same_server() {
    // The replica advances in whole wall seconds, so Prometheus and the probe, each scraping once
    // a second inside the same second, read the same values: what is compared is the arithmetic
    // (rates, histogram_quantile), not when each happened to scrape.
    // The port is held until the replica starts, so Prometheus cannot be given it for its own.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let target = format!("127.0.0.1:{port}");
    let Some(prom) = prometheus(&target) else { return };
    // Prometheus keeps its own phase in the second (it scrapes the port, and records `up`, before
    // anything serves there). The replica's ticks start when it says it serves, so it is started
    // half a second from that phase: a scrape that comes late on a busy machine still lands in
    // the tick it was meant for, where one near a tick's end would read the next tick's counts.
    let mut last_scrape = f64::NAN;
    for _ in 0..50 {
        last_scrape = prom.query_opt("timestamp(up{job=\"vllm\"})", now_unix_s()).unwrap_or(f64::NAN);
        if last_scrape.is_finite() {
            break;
        }
        sleep_s(0.2);
    }
    assert!(last_scrape.is_finite(), "prometheus never scraped the port");
    drop(held);
    // Started 0.4 s after a scrape, it says it serves about 0.1 s later; a start slowed by a busy
    // machine is tried again.
    let (mut served, mut tick_start, mut p) = (None, f64::NAN, f64::NAN);
    for _ in 0..3 {
        drop(served.take()); // a replica started too late gives the port back first
        sleep_s((last_scrape + 0.4 - now_unix_s()).rem_euclid(1.0));
        let replica = serve_on(port, "examples/chat.json", &["--speed", "10", "--tick", "1"]);
        // Where Prometheus scrapes inside a tick (the ticks start when the server said it serves).
        tick_start = now_unix_s() - replica.age_s();
        p = (last_scrape - tick_start).rem_euclid(1.0);
        served = Some(replica);
        if (0.25..=0.75).contains(&p) {
            break;
        }
    }
    assert!((0.25..=0.75).contains(&p), "the replica's ticks start {p:.3} s after Prometheus's scrapes, not mid-tick");
    let served = served.expect("a replica started");
    eprintln!("Prometheus scrapes {p:.3} s into each of the replica's ticks");
    // A phase for the probe in the same tick, 0.2 s from Prometheus's and clear of the tick's ends.
    let q = if p >= 0.5 { p - 0.2 } else { p + 0.2 };
    sleep_s((tick_start + q - now_unix_s()).rem_euclid(1.0));
    let (code, ticks, stderr) =
        probe(&format!("{}/metrics", served.base), &["--interval", "1s", "--window", "60s", "--count", "66"]);
    assert_eq!(code, Some(0), "{stderr}");
    let last = ticks.last().unwrap();
    let report = &last["models"][0];
    // Prometheus is asked at the later of the two last scrapes, over a range that holds its
    // scrapes of the same 61 ticks as the probe's window.
    let t = last["t_unix_s"].as_f64().unwrap() + (p - q).max(0.0) + 0.01;
    let range_ms = ((60.5 + (q - p).max(0.0)) * 1000.0).round();
    // Let Prometheus ingest its scrape of that second before asking it about that instant.
    sleep_s(2.0);
    let query = |q: &str| prom.query(&q.replace("RANGE", &format!("{range_ms}ms")), t);
    let p_rate = query("sum(rate(vllm:request_success_total[RANGE]))");
    let p_ttft = query("histogram_quantile(0.99, rate(vllm:time_to_first_token_seconds_bucket[RANGE]))");
    let p_e2e = query("histogram_quantile(0.99, rate(vllm:e2e_request_latency_seconds_bucket[RANGE]))");
    let rate = report["request_rate_rps"].as_f64().unwrap();
    let ttft = report["ttft"]["p99"]["value"].as_f64().unwrap();
    let e2e = report["e2e"]["p99"]["value"].as_f64().unwrap();
    eprintln!(
        "over 60 s: request rate probe {rate:.3} vs Prometheus {p_rate:.3} ({:+.2}%); TTFT p99 {ttft:.4} vs {p_ttft:.4} \
         ({:+.2}%); E2E p99 {e2e:.3} vs {p_e2e:.3} ({:+.2}%)",
        (rate / p_rate - 1.0) * 100.0,
        (ttft / p_ttft - 1.0) * 100.0,
        (e2e / p_e2e - 1.0) * 100.0
    );
    assert!((rate / p_rate - 1.0).abs() <= 0.01, "rate {rate} vs {p_rate}");
    assert!((ttft / p_ttft - 1.0).abs() <= 0.01, "TTFT p99 {ttft} vs {p_ttft}");
    assert!((e2e / p_e2e - 1.0).abs() <= 0.01, "E2E p99 {e2e} vs {p_e2e}");
}

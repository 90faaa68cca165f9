//! "On your cluster": `kneelab serve-metrics` served over real sockets and scraped as Prometheus
//! scrapes it, checked by promtool; `kneelab probe` against it and against broken endpoints.

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
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `kneelab serve-metrics CONFIG --port 0 args...` and waits for its start line.
fn serve(config: &str, args: &[&str]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kneelab"))
        .current_dir(root())
        .args(["serve-metrics", config, "--port", "0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kneelab runs");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    stderr.read_line(&mut banner).unwrap();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::Builder::new().spawn(move || std::io::copy(&mut stderr, &mut std::io::sink())).unwrap();
    let base = banner
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://").and_then(|rest| rest.strip_suffix("/metrics")))
        .map(|host| format!("http://{host}"))
        .unwrap_or_else(|| panic!("no address in the start line: {banner}"));
    Served { child, base, banner }
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
    let success = "vllm:request_success_total{engine=\"0\",model_name=\"meta-llama/Meta-Llama-3-8B-Instruct\",finished_reason=\"length\"}";
    let (a, b) = (value(&first, success), value(&second, success));
    // chat.json offers 80% of its capacity; 1.5 s of wall time at 20x is 30 simulated seconds.
    assert!(a > 0.0 && b > a, "requests finished: {a} then {b}");
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
fn serve_metrics_says_what_is_wrong_with_its_flags() {
    for (args, said) in [
        (vec!["--speed", "0"], "kneelab: error: --speed: must be above 0 and at most 1000"),
        (vec!["--speed", "5000"], "kneelab: error: --speed: must be above 0 and at most 1000"),
        (vec!["--model", " "], "kneelab: error: --model: must not be empty"),
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

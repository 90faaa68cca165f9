//! The real `kneelab` binary, run as a user runs it: exit codes, stdout, stderr.
//! Cases are rows of data where they share a shape; helpers run the binary and check the contract.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The repository root, where `examples/` lives; the binary runs there so paths read as in the docs.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `kneelab args...`, feeding `stdin` when given.
fn kneelab(args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kneelab"));
    command.args(args);
    spawn(command, stdin)
}

/// Runs `kneelab args...` under a limit of 10 s of CPU time and 2 GiB of address space (the
/// kernel's `ulimit`, so no test reads a clock): past either, it is killed and has no exit code.
fn kneelab_bounded(args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -t 10 && ulimit -v 2097152 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_kneelab"))
        .args(args);
    spawn(command, stdin)
}

fn spawn(mut command: Command, stdin: Option<&str>) -> Output {
    let mut child = command
        .current_dir(root())
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kneelab binary starts");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        // The binary may exit (bad flags) before reading; a closed pipe is its answer, not ours.
        let _ = pipe.write_all(text.as_bytes());
    }
    child.wait_with_output().expect("the kneelab binary finishes")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

/// Succeeds with exit 0 and returns stdout.
fn ok(args: &[&str], stdin: Option<&str>) -> String {
    let out = kneelab(args, stdin);
    assert_eq!(out.status.code(), Some(0), "kneelab {args:?} failed: {}", stderr(&out));
    stdout(&out)
}

/// Fails the contract's way: exit 2, nothing on stdout, exactly one stderr line
/// `kneelab: error: ...` containing `phrase`.
fn fails(args: &[&str], stdin: Option<&str>, phrase: &str) {
    let out = kneelab(args, stdin);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "kneelab {args:?} stdin={stdin:?}: exit code; stderr: {err}");
    assert!(out.stdout.is_empty(), "kneelab {args:?}: stdout should be empty, got {}", stdout(&out));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "kneelab {args:?}: want one stderr line, got {err:?}");
    assert!(lines[0].starts_with("kneelab: error: "), "kneelab {args:?}: {}", lines[0]);
    assert!(lines[0].contains(phrase), "kneelab {args:?}: {:?} does not mention {phrase:?}", lines[0]);
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn num(v: &Value, path: &str) -> f64 {
    let mut at = v;
    for key in path.split('.') {
        at = &at[key];
    }
    at.as_f64().unwrap_or_else(|| panic!("{path} is not a number: {at}"))
}

/// A small, fast config for the tests that run the engine many times (fed on stdin).
const SMALL: &str = r#"{
  "engine": { "max_num_seqs": 32, "max_num_batched_tokens": 1024 },
  "workload": { "preset": "chat" },
  "load": { "mode": "open", "offered_load": 0.8 },
  "slo": { "ttft_ms": 500, "tpot_ms": 50 },
  "run": { "requests": 2000, "warmup_requests": 200 }
}"#;

#[test]
fn run_prints_every_summary_field_with_sane_numbers() {
    let s = json(&ok(&["run", "examples/rag.json"], None));
    let scalars = [
        "requests_completed",
        "duration_s",
        "throughput_rps",
        "output_tokens_per_s",
        "goodput_rps",
        "slo_attainment",
        "num_requests_running_mean",
        "num_requests_waiting_mean",
        "kv_cache_usage_mean",
        "num_preemptions",
        "littles_law.l",
        "littles_law.lambda_rps",
        "littles_law.w_s",
        "littles_law.rel_error",
        "capacity_rps",
    ];
    for field in scalars {
        assert!(num(&s, field).is_finite(), "{field}");
    }
    for stat in ["ttft_s", "tpot_s", "itl_s", "e2e_s", "queue_s"] {
        let [mean, p50, p90, p99] = ["mean", "p50", "p90", "p99"].map(|q| num(&s, &format!("{stat}.{q}")));
        assert!(0.0 < p50 && p50 <= p90 && p90 <= p99, "{stat}: p50 {p50} p90 {p90} p99 {p99}");
        assert!(mean > 0.0, "{stat}: mean {mean}");
    }
    assert_eq!(s["truncated"], Value::Bool(false));
    assert_eq!(num(&s, "requests_completed"), 9000.0, "10000 requests less 1000 warm-up");
    assert!(num(&s, "goodput_rps") <= num(&s, "throughput_rps"));
    assert!((0.0..=1.0).contains(&num(&s, "slo_attainment")));
    assert!(num(&s, "capacity_rps") > num(&s, "throughput_rps"), "offered load 0.9 stays below capacity");
    assert!(num(&s, "littles_law.rel_error").abs() < 0.05, "Little's Law holds in steady state");
}

#[test]
fn stdin_and_file_give_the_same_bytes() {
    let text = std::fs::read_to_string(root().join("examples/rag.json")).expect("examples/rag.json");
    let from_file = ok(&["run", "examples/rag.json"], None);
    let from_stdin = ok(&["run", "-"], Some(&text));
    assert_eq!(from_file, from_stdin);
}

#[test]
fn seed_flag_changes_the_result_and_compact_is_one_line() {
    let base = json(&ok(&["run", "-"], Some(SMALL)));
    let seeded = ok(&["run", "-", "--seed", "7", "--compact"], Some(SMALL));
    assert_eq!(seeded.lines().count(), 1);
    let seeded = json(&seeded);
    assert_ne!(num(&base, "ttft_s.p99"), num(&seeded, "ttft_s.p99"));
    assert_ne!(num(&base, "e2e_s.mean"), num(&seeded, "e2e_s.mean"));
}

#[test]
fn a_truncated_run_warns_on_one_line_and_still_succeeds() {
    // A million arrivals in about a second at a server doing 100 requests/s: the in-system cap stops it.
    let flood = r#"{
      "engine": { "max_num_seqs": 1, "max_num_batched_tokens": 16 },
      "cost": { "model": "linear", "step_ms": 10, "per_token_ms": 0, "per_context_token_ms": 0 },
      "workload": { "prompt_tokens": { "dist": "fixed", "value": 1 }, "output_tokens": { "dist": "fixed", "value": 1 } },
      "load": { "mode": "open", "rate_rps": 1000000 },
      "run": { "requests": 1000000, "warmup_requests": 0 }
    }"#;
    let out = kneelab(&["run", "-"], Some(flood));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&stdout(&out))["truncated"], Value::Bool(true));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("kneelab: warning: <stdin>: ") && err.contains("truncated"), "{err}");
}

/// The repros of the "unbreakable" issue: each once panicked, aborted on a huge allocation or
/// never finished. Each must now end within seconds with a named error or a bounded result.
#[test]
fn edge_loads_end_with_a_named_error_or_a_bounded_result() {
    // (config, Some(phrase) = exit 2 naming it, None = exit 0)
    let rows: &[(&str, Option<&str>)] = &[
        // An infinite first gap: a 4.8 GB allocation once.
        (r#"{"load":{"mode":"open","rate_rps":5e-324}}"#, Some("load.rate_rps: must be from")),
        // The page's tiny-load repros, as a fraction of capacity.
        (r#"{"load":{"mode":"open","offered_load":5e-324}}"#, Some("load.offered_load: must be from")),
        (r#"{"load":{"mode":"open","offered_load":1e-300}}"#, Some("load.offered_load: must be from")),
        // Nanosecond steps and an arrival every 10 s: the old decode-run search walked ~1e10 steps.
        (
            r#"{"cost":{"model":"linear","step_ms":1e-6},"load":{"mode":"open","rate_rps":0.1},"run":{"requests":10}}"#,
            None,
        ),
        // One request and nothing after it for about 1e13 s.
        (
            r#"{"load":{"mode":"open","rate_rps":1e-13},"run":{"requests":1,"warmup_requests":0}}"#,
            Some("load.rate_rps"),
        ),
        (r#"{"load":{"mode":"open","rate_rps":1e-6},"run":{"requests":2,"warmup_requests":0}}"#, None),
        // A flood during one 1,000 s step: 91 M arrivals were admitted (6.7 GB) before the
        // in-system cap was looked at.
        (
            r#"{"cost":{"model":"linear","step_ms":1000000},"load":{"mode":"open","rate_rps":1000000},"run":{"requests":1}}"#,
            None,
        ),
    ];
    for (config, phrase) in rows {
        let out = kneelab_bounded(&["run", "-"], Some(config));
        let err = stderr(&out);
        match phrase {
            Some(phrase) => {
                assert_eq!(out.status.code(), Some(2), "{config}: {err}");
                assert!(err.lines().count() == 1 && err.contains(phrase), "{config}: want {phrase:?}, got {err}");
            }
            None => {
                assert_eq!(out.status.code(), Some(0), "{config}: {err}");
                json(&stdout(&out));
            }
        }
    }
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let with_bom = ok(&["run", "--compact", "-"], Some("\u{feff}{\"run\": {\"requests\": 300}}"));
    let without = ok(&["run", "--compact", "-"], Some("{\"run\": {\"requests\": 300}}"));
    assert_eq!(with_bom, without);
}

/// A short closed loop once reported a Little's Law error of 194% with no word of warning.
#[test]
fn a_run_not_in_steady_state_says_so() {
    let short = r#"{"load":{"mode":"closed","users":200,"think_time_s":1},"run":{"requests":20,"warmup_requests":0}}"#;
    let out = kneelab(&["run", "-"], Some(short));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = json(&stdout(&out));
    assert_eq!(summary["steady_state"], Value::Bool(false));
    assert!(num(&summary, "littles_law.rel_error").abs() > 0.5, "the repro's error is large");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not steady state") && err.contains("only 20 measured requests"), "{err}");
    // Overload: the queue grows for as long as the run lasts.
    let over = r#"{"workload":{"preset":"rag"},"load":{"mode":"open","offered_load":1.15},"run":{"requests":3000}}"#;
    let out = kneelab(&["run", "-"], Some(over));
    assert_eq!(json(&stdout(&out))["steady_state"], Value::Bool(false));
    assert!(stderr(&out).contains("overloaded"), "{}", stderr(&out));
    // A long run below the knee is steady, and silent.
    let out = kneelab(&["run", "examples/rag.json"], None);
    assert_eq!(json(&stdout(&out))["steady_state"], Value::Bool(true));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

/// Inter-token gaps past the histogram's top (about 10,142 s) were once clamped to it.
#[test]
fn itl_percentiles_are_exact_past_the_histogram_top() {
    // Each decode step reads a 10,000-token context at 1 s a token: 11,001 s, then 11,002 s.
    let slow = r#"{"cost":{"model":"linear","step_ms":1000000,"per_token_ms":0,"per_context_token_ms":1000},
      "workload":{"prompt_tokens":{"dist":"fixed","value":10000},"output_tokens":{"dist":"fixed","value":4}},
      "load":{"mode":"open","rate_rps":1e-6},"run":{"requests":3,"warmup_requests":0}}"#;
    let summary = json(&stdout(&kneelab_bounded(&["run", "-"], Some(slow))));
    assert_eq!(num(&summary, "itl_s.p50"), 11_001.0);
    assert_eq!(num(&summary, "itl_s.p99"), 11_002.0);
}

#[test]
fn usage_errors_are_one_line_with_exit_code_2() {
    // (args, phrase): clap once printed 5-23 lines of usage for these.
    let rows: &[(&[&str], &str)] = &[
        (&[], "a subcommand is required"),
        (&["frobnicate"], "frobnicate"),
        (&["run"], "CONFIG"),
        (&["run", "examples/rag.json", "--no-such-flag"], "--no-such-flag"),
        (&["size", "--max-num-seqs"], "--max-num-seqs"),
        (&["sweep", "examples/rag.json", "--format", "xml"], "xml"),
    ];
    for (args, phrase) in rows {
        let out = kneelab(args, None);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("kneelab: error: ") && err.contains(phrase), "{args:?}: {err}");
        assert!(err.contains("see kneelab --help"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn every_example_runs() {
    let mut names: Vec<String> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .map(|e| e.expect("a directory entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    for want in ["chat.json", "closed-loop.json", "mm1.json", "rag.json"] {
        assert!(names.iter().any(|n| n == want), "examples/{want} is missing");
    }
    // A fleet config is run by `kneelab fleet` (tested below).
    for name in names.into_iter().filter(|n| !n.starts_with("fleet")) {
        let path = format!("examples/{name}");
        let out = kneelab(&["run", &path], None);
        assert_eq!(out.status.code(), Some(0), "{path}: {}", stderr(&out));
        assert!(out.stderr.is_empty(), "{path} warns: {}", stderr(&out));
        let s = json(&stdout(&out));
        assert!(num(&s, "requests_completed") > 0.0, "{path}");
    }
}

#[test]
fn mm1_example_matches_the_textbook() {
    // M/M/1 at rho = 0.9 with a mean service of 1 s: W = 1 / (mu - lambda) = 10 s, L = 9.
    let s = json(&ok(&["run", "examples/mm1.json"], None));
    let (w, l) = (num(&s, "e2e_s.mean"), num(&s, "littles_law.l"));
    assert!((w / 10.0 - 1.0).abs() < 0.1, "W = {w}");
    assert!((l / 9.0 - 1.0).abs() < 0.1, "L = {l}");
}

#[test]
fn sweep_json_has_the_loads_asked_for_and_a_knee() {
    let s = json(&ok(&["sweep", "-", "--loads", "0.5:1.0:0.25"], Some(SMALL)));
    let loads: Vec<f64> = s["points"].as_array().expect("points").iter().map(|p| num(p, "offered_load")).collect();
    assert_eq!(loads, [0.5, 0.75, 1.0]);
    assert!(num(&s, "capacity_rps") > 0.0);
    assert!(num(&s, "knee.offered_load") >= 0.5);
    assert!(num(&s, "saturation.throughput_rps") > 0.0);
    assert_eq!(num(&s, "attainment_target"), 0.9);
    for p in s["points"].as_array().expect("points") {
        assert!(num(p, "summary.ttft_s.p99") >= num(p, "summary.ttft_s.p50"));
    }
}

#[test]
fn sweep_runs_its_points_at_once_and_prints_the_same_sweep_as_one_after_another() {
    let printed = ok(&["sweep", "-", "--loads", "0.1:1.2:0.1"], Some(SMALL));
    let config = kneelab_sim::Config::from_json(SMALL).expect("SMALL is a valid config");
    let loads = kneelab_sim::sweep::load_grid(0.1, 1.2, 0.1).expect("a grid");
    let sequential = kneelab_sim::sweep(&config, &loads, kneelab_sim::SweepOptions::default()).expect("sweeps");
    assert_eq!(sequential.points.len(), 12);
    assert_eq!(printed, serde_json::to_string_pretty(&sequential).expect("serializes") + "\n");
}

#[test]
fn sweep_csv_is_a_header_a_row_per_load_and_comments() {
    let text = ok(&["sweep", "-", "--loads", "0.2:1.0:0.2", "--format", "csv", "--target", "0.95"], Some(SMALL));
    let lines: Vec<&str> = text.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(
        header,
        [
            "offered_load",
            "offered_rps",
            "throughput_rps",
            "goodput_rps",
            "slo_attainment",
            "ttft_p50_s",
            "ttft_p99_s",
            "tpot_p50_s",
            "tpot_p99_s",
            "itl_p99_s",
            "e2e_p50_s",
            "e2e_p99_s",
            "num_requests_running_mean",
            "num_requests_waiting_mean",
            "num_preemptions",
        ]
    );
    let rows: Vec<Vec<f64>> = lines[1..]
        .iter()
        .take_while(|l| !l.starts_with('#'))
        .map(|l| l.split(',').map(|c| c.parse().unwrap_or_else(|_| panic!("not a number: {c} in {l}"))).collect())
        .collect();
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r.len() == header.len()));
    assert_eq!(rows.iter().map(|r| r[0]).collect::<Vec<_>>(), [0.2, 0.4, 0.6, 0.8, 1.0]);
    let comments: Vec<&str> = lines[1 + rows.len()..].to_vec();
    assert!(comments.iter().all(|l| l.starts_with("# ")), "{comments:?}");
    assert!(comments.iter().any(|l| l.starts_with("# capacity_rps=")), "{comments:?}");
    assert!(comments.iter().any(|l| l.starts_with("# knee ")), "{comments:?}");
    assert!(comments.iter().any(|l| l.starts_with("# saturation ")), "{comments:?}");
    assert!(comments.iter().any(|l| l.contains("attainment_target=0.95")), "{comments:?}");
}

#[test]
fn bad_flags_fail_with_one_line_naming_the_flag() {
    // (args, phrase the error must contain)
    let rows: &[(&[&str], &str)] = &[
        (&["sweep", "examples/rag.json", "--loads", "1:0.5:0.1"], "--loads"),
        (&["sweep", "examples/rag.json", "--loads", "a:b:c"], "--loads"),
        (&["sweep", "examples/rag.json", "--loads", "0.1:1:0"], "--loads"),
        (&["sweep", "examples/rag.json", "--loads", "0.1:1"], "--loads"),
        (&["sweep", "examples/rag.json", "--target", "1.5"], "--target"),
        (&["sweep", "examples/rag.json", "--format", "xml"], "--format"),
        (&["size", "--max-num-seqs", "64", "--batch-s", "0", "--peak-qps", "100"], "--batch-s"),
        (&["size", "--max-num-seqs", "64", "--batch-s", "8", "--peak-qps", "-1"], "--peak-qps"),
        (&["size", "--max-num-seqs", "0", "--batch-s", "8", "--peak-qps", "100"], "--max-num-seqs"),
        (&["size", "--max-num-seqs", "64", "--batch-s", "8", "--peak-qps", "100", "--knee-qps", "0"], "--knee-qps"),
        (&["size", "--max-num-seqs", "64", "--batch-s", "abc", "--peak-qps", "100"], "--batch-s"),
        (&["size", "--max-num-seqs", "64", "--batch-s", "nan", "--peak-qps", "100"], "--batch-s"),
        (&["size", "--config", "examples/rag.json", "--peak-qps", "0"], "--peak-qps"),
        (&["size", "--config", "examples/rag.json", "--peak-qps", "40", "--loads", "2:1:1"], "--loads"),
    ];
    for (args, phrase) in rows {
        fails(args, None, phrase);
    }
}

#[test]
fn size_by_hand_shows_littles_law() {
    let by_hand = ["size", "--max-num-seqs", "64", "--batch-s", "8", "--peak-qps", "100"];
    let text = ok(&by_hand, None);
    assert!(text.contains("sequence-cap ceiling = 64 / 8 s = 8.00"), "{text}");
    assert!(text.contains("ceil(100 / 8.00) = 13"), "{text}");

    let s = json(&ok(&[&by_hand[..], &["--format", "json"]].concat(), None));
    assert_eq!((num(&s, "per_replica_max_qps"), num(&s, "replicas")), (8.0, 13.0));

    let s = json(&ok(&[&by_hand[..], &["--knee-qps", "6", "--format", "json"]].concat(), None));
    assert_eq!(num(&s, "replicas_at_knee"), 17.0);
    assert_eq!(num(&s, "provision_replicas"), 17.0);
    let text = ok(&[&by_hand[..], &["--knee-qps", "6"]].concat(), None);
    assert!(text.contains("provision 17 replicas, not 13"), "{text}");
}

#[test]
fn size_from_a_config_provisions_by_the_knee() {
    let s = json(&ok(&["size", "--config", "examples/rag.json", "--peak-qps", "40", "--format", "json"], None));
    let (knee, saturation) = (num(&s, "replicas_at_knee"), num(&s, "replicas_at_saturation"));
    assert!(knee >= saturation, "knee {knee} < saturation {saturation}");
    assert!(num(&s, "knee_qps") <= num(&s, "saturation_qps"));
    assert_eq!(num(&s, "max_num_seqs"), 64.0, "engine.max_num_seqs of rag.json");
    assert_eq!(num(&s, "batch_s"), num(&s, "sweep.saturation_batch_s"));
    assert_eq!(s["sweep"]["limits"]["binding"], "prefill", "RAG at 64 seqs binds on prefill");
    assert!(num(&s, "batch_s") < num(&s, "sweep.knee_e2e_mean_s") * 3.0);
    assert_eq!(num(&s, "provision_replicas"), knee);
    let text = ok(&["size", "--config", "-", "--peak-qps", "40", "--loads", "0.3:1.1:0.2"], Some(SMALL));
    assert!(text.contains("replicas at the knee = ceil(40 / "), "{text}");
    assert!(text.contains("replicas at saturation = ceil(40 / "), "{text}");
}

#[test]
fn bad_configs_fail_with_one_line_naming_the_field() {
    // (CONFIG argument, stdin, phrase the one error line must contain)
    let rows: &[(&str, Option<&str>, &str)] = &[
        ("-", Some("{\n  \"seed\": 1,\n}"), "line 3, column 1"),
        ("-", Some(r#"{"engine": {"max_num_seq": 8}}"#), "engine.max_num_seq: unknown field"),
        ("-", Some(r#"{"engine": {"max_num_seqs": 0}}"#), "engine.max_num_seqs: must be from 1 to 16384, got 0"),
        ("examples/no-such-config.json", None, "examples/no-such-config.json"),
        ("examples", None, "examples: cannot read"),
        (
            "-",
            Some(
                r#"{"engine": {"chunked_prefill": false, "max_num_batched_tokens": 2048}, "workload": {"preset": "rag"}}"#,
            ),
            "engine.max_num_batched_tokens",
        ),
        ("-", Some(r#"{"load": {"mode": "closed", "users": 4}}"#), "load.think_time_s"),
        ("-", Some(""), "<stdin>: is empty"),
        ("-", Some("[1, 2]"), "JSON object"),
        ("-", Some(r#"{"seed": "x"}"#), "seed"),
        ("-", Some(r#"{"cost": {"model": "roofline", "preset": "llama-9"}}"#), "cost.preset"),
        ("-", Some(r#"{"run": {"requests": 10, "warmup_requests": 10}}"#), "run.warmup_requests"),
        ("-", Some(r#"{"load": {"mode": "open", "rate_rps": 1, "offered_load": 0.5}}"#), "load.offered_load"),
        // A key given twice once kept the last value without a word.
        ("-", Some(r#"{"engine": {"max_num_seqs": 8, "max_num_seqs": 256}}"#), "engine.max_num_seqs: given twice"),
    ];
    for (config, stdin, phrase) in rows {
        fails(&["run", config], *stdin, phrase);
    }
    // The same reader and messages serve every subcommand.
    for (config, stdin, phrase) in &rows[..4] {
        fails(&["sweep", config], *stdin, phrase);
        fails(&["size", "--config", config, "--peak-qps", "10"], *stdin, phrase);
    }
}

#[test]
fn help_has_worked_examples_and_version_works() {
    for args in [&["--help"][..], &["run", "--help"], &["sweep", "--help"], &["size", "--help"]] {
        let text = ok(args, None);
        assert!(text.contains("Examples:") && text.contains("kneelab "), "{args:?}: {text}");
    }
    assert!(ok(&["--version"], None).starts_with("kneelab "));
    assert_eq!(kneelab(&["frobnicate"], None).status.code(), Some(2), "clap's usage errors exit 2");
}

#[test]
fn calibrate_prints_every_figure_held() {
    let out = kneelab(&["calibrate", "--requests", "2000"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("V1 mean E2E at 40 QPS") && text.contains("A100 linear layers, 8192 tokens"), "{text}");
    assert!(text.contains("23 of 23 held figures within tolerance"), "{text}");
    let json = kneelab(&["calibrate", "--format", "json", "--requests", "2000"], None);
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 26);
    assert_eq!(rows[0]["tolerance"], 0.1);
    let bad = kneelab(&["calibrate", "--requests", "0"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--requests"), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn run_takes_the_load_as_vllm_bench_serve_does() {
    let summary = |args: &[&str]| -> serde_json::Value {
        let out = kneelab(args, None);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let burst = summary(&[
        "run",
        "examples/chat.json",
        "--request-rate",
        "inf",
        "--num-prompts",
        "300",
        "--max-concurrency",
        "32",
    ]);
    assert_eq!(burst["load_mode"], "burst");
    assert_eq!(burst["requests_completed"], 300, "a burst measures every request");
    assert_eq!(burst["users"], 32);
    let alone = summary(&["run", "examples/chat.json", "--max-concurrency", "32", "--num-prompts", "300"]);
    assert_eq!(alone["duration_s"], burst["duration_s"], "--max-concurrency alone means --request-rate inf");
    let open =
        summary(&["run", "examples/chat.json", "--request-rate", "2.5", "--burstiness", "0.5", "--num-prompts", "500"]);
    assert_eq!((open["load_mode"].as_str(), open["offered_rate_rps"].as_f64()), (Some("open"), Some(2.5)));
    for (args, says) in [
        (&["run", "examples/chat.json", "--request-rate", "2", "--max-concurrency", "8"][..], "--max-concurrency"),
        (&["run", "examples/chat.json", "--request-rate", "inf", "--burstiness", "2"][..], "--burstiness"),
        (&["run", "examples/chat.json", "--request-rate", "fast"][..], "--request-rate"),
        (&["run", "examples/chat.json", "--burstiness", "0.5"][..], "--request-rate"),
        (&["run", "examples/chat.json", "--request-rate", "-3"][..], "load.rate_rps"),
    ] {
        let out = kneelab(args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn fleet_prints_totals_and_its_series_and_names_a_bad_field() {
    let out = kneelab(&["fleet", "examples/fleet.json"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for line in ["SLO attainment", "GPU-hours", "per 1,000 good requests"] {
        assert!(text.contains(line), "{text}");
    }
    let csv = kneelab(&["fleet", "examples/fleet.json", "--format", "csv"], None);
    let rows = String::from_utf8_lossy(&csv.stdout);
    assert!(rows.starts_with("t_s,offered_rps,"), "{rows}");
    assert_eq!(rows.lines().count(), 1 + 360);
    for (config, field) in [
        (r#"{"autoscaler": {"scale_up": 0}}"#, "autoscaler.scale_up"),
        (r#"{"autoscaler": {"min_replicas": 5, "max_replicas": 2}}"#, "autoscaler.min_replicas"),
        (r#"{"autoscaler": {"cold_start_s": 1e9}}"#, "autoscaler.cold_start_s"),
        (r#"{"router": {"policy": "fastest"}}"#, "router.policy"),
    ] {
        let out = kneelab(&["fleet", "-"], Some(config));
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(field) && err.lines().count() == 1, "{err}");
    }
}

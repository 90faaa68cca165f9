//! Bad configs are answered by an error naming the field and what is allowed — never a panic.
//! One row per case: the JSON, the field path expected, and a phrase the message must contain.

use kneelab_sim::{Config, Simulation, simulate};

/// Parses and validates `json`; returns the error's path and message.
fn error_of(json: &str) -> (String, String) {
    let result = Config::from_json(json).and_then(|c| c.validate().map(|_| c));
    match result {
        Err(e) => (e.path, e.message),
        Ok(c) => {
            // Some problems only show once a request is drawn: run it.
            let e = simulate(&c).expect_err(&format!("config should be rejected: {json}"));
            (e.path, e.message)
        }
    }
}

const RAG: &str = r#""workload": {"preset": "rag"}"#;

#[test]
fn bad_configs_name_the_field() {
    let rows: &[(&str, &str, &str)] = &[
        (r#"{"engine": {"max_num_seqs": 0}}"#, "engine.max_num_seqs", "from 1 to"),
        (r#"{"engine": {"max_num_seqs": -3}}"#, "engine.max_num_seqs", "invalid value"),
        (
            r#"{"engine": {"max_num_seqs": 64, "max_num_batched_tokens": 32}}"#,
            "engine.max_num_batched_tokens",
            "at least engine.max_num_seqs",
        ),
        (r#"{"engine": {"max_num_seq": 8}}"#, "engine.max_num_seq", "unknown field"),
        (r#"{"engine": {"kv_cache_tokens": 8}}"#, "engine.kv_cache_tokens", "from 16"),
        (r#"{"engine": {"chunked_prefill": "yes"}}"#, "engine.chunked_prefill", "expected a boolean"),
        (r#"{"cost": {"model": "linear"}}"#, "cost.step_ms", "required"),
        (r#"{"cost": {"model": "linear", "step_ms": -1}}"#, "cost.step_ms", "must be a number from"),
        (
            r#"{"cost": {"model": "linear", "step_ms": 10, "preset": "llama-3-8b-a100"}}"#,
            "cost.preset",
            "does not apply",
        ),
        (r#"{"cost": {"model": "roofline", "preset": "llama-9"}}"#, "cost.preset", "known presets"),
        (r#"{"cost": {"model": "roofline"}}"#, "cost.overhead_ms", "without a preset"),
        (r#"{"cost": {"model": "quantum"}}"#, "cost.model", "unknown variant"),
        (r#"{"workload": {"preset": "code"}}"#, "workload.preset", "unknown variant"),
        (
            r#"{"workload": {"prompt_tokens": {"dist": "fixed", "value": 0}}}"#,
            "workload.prompt_tokens.value",
            "from 1 to",
        ),
        (
            r#"{"workload": {"prompt_tokens": {"dist": "uniform", "min": 50, "max": 10}, "output_tokens": {"dist": "fixed", "value": 5}}}"#,
            "workload.prompt_tokens.max",
            "at least min",
        ),
        (
            r#"{"workload": {"prompt_tokens": {"dist": "fixed", "value": 5}, "output_tokens": {"dist": "lognormal", "mean": 100}}}"#,
            "workload.output_tokens.sigma",
            "required",
        ),
        (
            r#"{"workload": {"prompt_tokens": {"dist": "fixed", "value": 5, "mean": 3}, "output_tokens": {"dist": "fixed", "value": 5}}}"#,
            "workload.prompt_tokens.mean",
            "does not apply",
        ),
        (
            r#"{"workload": {"preset": null, "prompt_tokens": {"dist": "fixed", "value": 5}}}"#,
            "workload.output_tokens",
            "required unless",
        ),
        (r#"{"load": {"mode": "open"}}"#, "load.rate_rps", "needs rate_rps"),
        (r#"{"load": {"mode": "open", "rate_rps": 1, "offered_load": 0.5}}"#, "load.offered_load", "not both"),
        (r#"{"load": {"mode": "open", "rate_rps": 0}}"#, "load.rate_rps", "from 0.000001 to 1000000 requests/s"),
        // A vanishing rate once made an infinite first gap (and a 4.8 GB allocation).
        (r#"{"load": {"mode": "open", "rate_rps": 5e-324}}"#, "load.rate_rps", "from 0.000001"),
        (r#"{"load": {"mode": "open", "offered_load": 20}}"#, "load.offered_load", "from 0.001 to 10"),
        (r#"{"load": {"mode": "open", "offered_load": 1e-300}}"#, "load.offered_load", "from 0.001 to 10"),
        (
            r#"{"load": {"mode": "closed", "offered_load": 5e-324, "think_time_s": 1}}"#,
            "load.offered_load",
            "from 0.001",
        ),
        (r#"{"load": {"mode": "open", "rate_rps": 1, "users": 3}}"#, "load.users", "does not apply"),
        (r#"{"load": {"mode": "open", "rate_rps": 1, "burstiness": 0}}"#, "load.burstiness", "from 0.01"),
        (r#"{"load": {"mode": "closed", "users": 0, "think_time_s": 1}}"#, "load.users", "from 1 to"),
        (r#"{"load": {"mode": "closed", "users": 4}}"#, "load.think_time_s", "required"),
        (r#"{"load": {"mode": "closed", "users": 4, "think_time_s": -2}}"#, "load.think_time_s", "from 0"),
        (r#"{"load": {"mode": "sideways"}}"#, "load.mode", "unknown variant"),
        (r#"{"slo": {"ttft_ms": 0, "tpot_ms": 50}}"#, "slo.ttft_ms", "above 0"),
        (r#"{"slo": {"ttft_ms": 500, "tpot_ms": -1}}"#, "slo.tpot_ms", "above 0"),
        (r#"{"run": {"requests": 100, "warmup_requests": 100}}"#, "run.warmup_requests", "below run.requests"),
        (r#"{"run": {"requests": 3000000}}"#, "run.requests", "from 1 to 1000000"),
        (r#"{"seed": "x"}"#, "seed", "invalid type"),
        (
            r#"{"engine": {"chunked_prefill": false, "max_num_batched_tokens": 2048}, "workload": {"preset": "rag"}}"#,
            "engine.max_num_batched_tokens",
            "longest request",
        ),
        (
            r#"{"engine": {"chunked_prefill": false, "max_num_batched_tokens": 8192}, "workload": {"prompt_tokens": {"dist": "geometric", "mean": 100}, "output_tokens": {"dist": "fixed", "value": 5}}}"#,
            "workload.prompt_tokens.max",
            "chunked prefill off",
        ),
        (
            &format!(r#"{{"engine": {{"kv_cache_tokens": 4000}}, {RAG}}}"#),
            "engine.kv_cache_tokens",
            "too small for the longest request",
        ),
        // Unbounded sizes can only be checked against the KV cache once a request is drawn.
        (
            r#"{"engine": {"kv_cache_tokens": 2000}, "workload": {"prompt_tokens": {"dist": "geometric", "mean": 1500}, "output_tokens": {"dist": "fixed", "value": 100}}, "load": {"mode": "open", "rate_rps": 1}}"#,
            "engine.kv_cache_tokens",
            "can never fit",
        ),
        // A key given twice: the last one must not win silently.
        (r#"{"engine": {"max_num_seqs": 8, "max_num_seqs": 256}}"#, "engine.max_num_seqs", "given twice"),
        (r#"{"seed": 1, "seed": 2}"#, "seed", "given twice"),
        // serde_json calls a number where a word goes a syntax error; it is a wrong type.
        (r#"{"cost": {"model": 5}}"#, "cost.model", "invalid type: integer `5`"),
        (r#"{"load": {"mode": 1.7976931348623157e308}}"#, "load.mode", "invalid type"),
        (r#"{"engine": {"max_num_seq": 1}}"#, "engine.max_num_seq", "unknown field `max_num_seq`"),
    ];
    assert!(rows.len() >= 15);
    for (json, path, phrase) in rows {
        let (got_path, message) = error_of(json);
        println!("{got_path}: {message}");
        assert_eq!(&got_path, path, "{json} -> {message}");
        assert!(message.contains(phrase), "{json}: message {message:?} lacks {phrase:?}");
        assert!(!message.contains('\n'), "one line: {message:?}");
    }
}

#[test]
fn json_syntax_errors_give_line_and_column() {
    for (json, where_) in
        [("{\n  \"seed\": 1,\n}", "line 3, column 1"), ("{\"seed\": 1", "line 1, column 10"), ("[1, 2]", "JSON object")]
    {
        let e = Config::from_json(json).unwrap_err();
        println!("{e}");
        assert!(e.to_string().contains(where_), "{e}");
    }
    let e = Config::from_json("{} {}").unwrap_err();
    assert!(e.to_string().contains("trailing characters"), "{e}");
}

#[test]
fn a_utf8_byte_order_mark_is_skipped() {
    let c = Config::from_json("\u{feff}{\"seed\": 7}").unwrap();
    assert_eq!(c.seed, 7);
    let e = Config::from_json("\u{feff}[1]").unwrap_err();
    assert!(e.to_string().contains("JSON object"), "{e}");
}

#[test]
fn the_empty_config_is_valid_and_uses_documented_defaults() {
    let c = Config::from_json("{}").unwrap();
    assert_eq!(c, Config::default());
    c.validate().unwrap();
    assert_eq!(c.engine.max_num_seqs, 64);
    assert_eq!(c.engine.block_size_tokens, 16);
}

#[test]
fn a_config_round_trips_through_json() {
    let c = Config::from_json(
        r#"{"seed": 9, "workload": {"preset": "rag"}, "load": {"mode": "closed", "users": 10, "think_time_s": 2}}"#,
    )
    .unwrap();
    assert_eq!(Config::from_json(&c.to_json()).unwrap(), c);
}

/// Absurd but valid configs finish in bounded work: a cap stops them and says so.
#[test]
fn absurd_loads_are_truncated_not_endless() {
    let json = r#"{"workload": {"preset": "rag"}, "load": {"mode": "open", "rate_rps": 1000000}, "run": {"requests": 1000000, "warmup_requests": 0}}"#;
    let config = Config::from_json(json).unwrap();
    let scenario = kneelab_sim::prepare_scenario(&config).unwrap();
    let options = kneelab_sim::Options { max_in_system: 100_000, ..Default::default() };
    let outcome = Simulation::new(&scenario, options).run().unwrap();
    assert!(outcome.summary.truncated);
}

/// A valid config whose work explodes (one-token steps through 3,000-token prompts, a million
/// requests) stops at the work cap with `truncated: true` instead of running for minutes.
#[test]
fn work_explosions_stop_at_the_cap() {
    let json = r#"{"engine": {"max_num_seqs": 1, "max_num_batched_tokens": 1}, "workload": {"preset": "rag"},
                   "load": {"mode": "open", "rate_rps": 0.01}, "run": {"requests": 1000000, "warmup_requests": 0}}"#;
    let summary = simulate(&Config::from_json(json).unwrap()).unwrap();
    assert!(summary.truncated);
    assert!(summary.requests_completed > 0 && summary.requests_completed < 1_000_000);
}

//! The limits rule: a replica's measured saturation is the least of its limits, within
//! [`TOLERANCE`], and the binding limit is the one the lesson names (prefill for RAG at 64
//! sequences, the sequence cap for chat). Where the KV cache binds, preemptions recompute
//! prompts the fluid model counts once, so the engine sits below the limit by more.

use kneelab_sim::capacity;
use kneelab_sim::{Config, LimitKind, Scenario, limits};

/// How far the fluid estimate may sit from the engine's measured saturation.
const TOLERANCE: f64 = 0.03;
/// Below the KV limit, preemptions' recomputation costs up to this much more.
const KV_TOLERANCE: f64 = 0.2;

fn scenario(example: &str, edit: impl FnOnce(&mut serde_json::Value)) -> Scenario {
    let path = format!("{}/../../examples/{example}.json", env!("CARGO_MANIFEST_DIR"));
    let mut value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    value["load"] = serde_json::json!({ "mode": "open", "rate_rps": 1.0 });
    edit(&mut value);
    Scenario::new(&Config::from_json(&value.to_string()).unwrap()).unwrap()
}

/// Example, what differs, the edit, and the limit that must bind (`None`: only the estimate).
type Row = (&'static str, &'static str, fn(&mut serde_json::Value), Option<LimitKind>);

#[test]
fn saturation_is_the_least_limit_and_the_binding_one_is_named() {
    use LimitKind::*;
    let rows: [Row; 11] = [
        ("rag", "64 seqs (the page's default)", |_| {}, Some(Prefill)),
        ("rag", "128 seqs", |v| v["engine"]["max_num_seqs"] = 128.into(), Some(Prefill)),
        ("rag", "32 seqs", |v| v["engine"]["max_num_seqs"] = 32.into(), Some(SeqCap)),
        ("rag", "16 seqs", |v| v["engine"]["max_num_seqs"] = 16.into(), Some(SeqCap)),
        ("rag", "8 seqs", |v| v["engine"]["max_num_seqs"] = 8.into(), Some(SeqCap)),
        ("chat", "64 seqs", |_| {}, Some(SeqCap)),
        ("chat", "8 seqs", |v| v["engine"]["max_num_seqs"] = 8.into(), Some(SeqCap)),
        ("chat", "256 seqs", |v| v["engine"]["max_num_seqs"] = 256.into(), Some(SeqCap)),
        ("chat", "a 20k-token KV cache", |v| v["engine"]["kv_cache_tokens"] = 20_000.into(), Some(KvCache)),
        ("chat", "on H100", |v| v["cost"]["preset"] = "llama-3-8b-h100".into(), Some(SeqCap)),
        (
            "rag",
            "without chunked prefill",
            |v| {
                v["engine"]["chunked_prefill"] = false.into();
                v["engine"]["max_num_batched_tokens"] = 8192.into();
            },
            None,
        ),
    ];
    let mut failures = Vec::new();
    for (example, what, edit, binding) in rows {
        let s = scenario(example, edit);
        let l = limits(&s);
        let measured = capacity::measure(&s).rps;
        let error = l.rps / measured - 1.0;
        let line = format!(
            "{example}, {what}: measured {measured:.2} req/s, least limit {:.2} ({:?}, {error:+.3}); seq cap {:.2}, KV {:.2}, prefill {:.2}",
            l.rps, l.binding, l.seq_cap.rps, l.kv_cache.rps, l.prefill.rps
        );
        println!("{line}");
        let within =
            if l.binding == KvCache { (0.0..=KV_TOLERANCE).contains(&error) } else { error.abs() <= TOLERANCE };
        if !within || binding.is_some_and(|b| b != l.binding) {
            failures.push(format!("{line}; want {binding:?} within {TOLERANCE}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_batch_limit_is_littles_law_on_the_batch() {
    // At the sequence cap the batch is full: rate x time in the batch = max_num_seqs.
    let l = limits(&scenario("chat", |_| {}));
    assert!((l.seq_cap.rps * l.seq_cap.batch_s - 64.0).abs() < 1e-9, "{:?}", l.seq_cap);
    // Prefill tokens per second are the rate times the mean prompt.
    let rag = limits(&scenario("rag", |_| {}));
    assert!((rag.prefill.prefill_tokens_per_s / rag.prefill.rps - 3000.0).abs() < 1e-6, "{:?}", rag.prefill);
}

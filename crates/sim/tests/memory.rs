//! Memory is bounded by the caps: the worst configs the schema accepts stay under a stated peak
//! allocation, counted by a counting global allocator (this test binary's only test, so nothing
//! else allocates while it measures).

use kneelab_sim::{Config, simulate};
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// The peak any one run may allocate. The worst rows measure about 170 MiB (the largest burst,
/// every request waiting at once) and 116 MiB (the in-system cap of 1,000,000 requests and the
/// recorder's per-request samples). A cap that stops holding shows
/// up here as gigabytes.
const LIMIT_MIB: f64 = 256.0;

/// Peak bytes allocated while running `json` (parse, validate, simulate), in MiB.
fn peak_mib(json: &str) -> (f64, bool) {
    ALLOCATOR.reset_peak_usage();
    let before = ALLOCATOR.current_usage();
    let result = Config::from_json(json).and_then(|c| c.validate().map(|_| c)).and_then(|c| simulate(&c));
    let peak = (ALLOCATOR.peak_usage() - before) as f64 / (1 << 20) as f64;
    (peak, result.is_ok())
}

#[test]
fn the_worst_configs_stay_under_the_stated_peak() {
    let rows = [
        // A flood during one 1,000 s step: once 91 M arrivals (6.7 GB) before the cap was checked.
        r#"{"cost":{"model":"linear","step_ms":1000000},"load":{"mode":"open","rate_rps":1000000},"run":{"requests":1}}"#,
        // The most requests, at the highest rate, arriving far faster than they are served.
        r#"{"cost":{"model":"linear","step_ms":1},"load":{"mode":"open","rate_rps":1000000},"run":{"requests":1000000,"warmup_requests":0}}"#,
        // The most users, each with a long request in flight.
        r#"{"engine":{"max_num_seqs":16384,"max_num_batched_tokens":1048576},"workload":{"preset":"rag"},"load":{"mode":"closed","users":100000,"think_time_s":0},"run":{"requests":20000}}"#,
        // The largest KV cache, in one-token blocks.
        r#"{"engine":{"kv_cache_tokens":1000000000,"block_size_tokens":1},"load":{"mode":"open","rate_rps":10},"run":{"requests":1000}}"#,
        // The longest requests.
        r#"{"workload":{"prompt_tokens":{"dist":"fixed","value":1000},"output_tokens":{"dist":"fixed","value":1000000}},"engine":{"kv_cache_tokens":1000000000},"load":{"mode":"open","rate_rps":1},"run":{"requests":3,"warmup_requests":0}}"#,
        // The largest burst: every request waiting at time 0 (`vllm bench --request-rate inf`).
        r#"{"workload":{"preset":"chat"},"load":{"mode":"burst"},"run":{"requests":1000000}}"#,
        // An offered load ten times the capacity: the capacity runs, then the flood.
        r#"{"workload":{"preset":"chat"},"load":{"mode":"open","offered_load":10},"run":{"requests":1000000,"warmup_requests":0}}"#,
    ];
    for json in rows {
        let (peak, ran) = peak_mib(json);
        println!("peak {peak:7.1} MiB ({}) {json}", if ran { "ran" } else { "rejected" });
        assert!(peak < LIMIT_MIB, "{json}: peak allocation {peak:.1} MiB over {LIMIT_MIB} MiB");
    }
}

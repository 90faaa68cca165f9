//! The one configuration schema shared by the CLI, the page, URL state and embed attributes.
//!
//! Every struct is flat (a `mode`/`model`/`dist` word plus optional fields) rather than a tagged
//! enum, so a mistake is reported against the exact field path (`load.rate_rps`) and unknown
//! fields are rejected by name. [`Config::validate`] checks values and cross-field rules.

#[cfg(feature = "traffic")]
use crate::traffic::TrafficConfig;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// A whole simulation setup: engine, cost model, workload, load, SLOs and run length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Seed of every random stream; the same seed gives a bit-identical summary.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The serving engine's knobs (vLLM's names).
    #[serde(default)]
    pub engine: EngineConfig,
    /// How long one engine step takes.
    #[serde(default)]
    pub cost: CostConfig,
    /// Request sizes.
    #[serde(default)]
    pub workload: WorkloadConfig,
    /// How requests arrive.
    #[serde(default)]
    pub load: LoadConfig,
    /// The latency promises that decide which requests count towards goodput.
    #[serde(default)]
    pub slo: SloConfig,
    /// How many requests to simulate.
    #[serde(default)]
    pub run: RunConfig,
}

pub(crate) fn default_seed() -> u64 {
    42
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: default_seed(),
            engine: EngineConfig::default(),
            cost: CostConfig::default(),
            workload: WorkloadConfig::default(),
            load: LoadConfig::default(),
            slo: SloConfig::default(),
            run: RunConfig::default(),
        }
    }
}

/// The engine's scheduling knobs, named as vLLM names them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// `--max-num-seqs`: the most requests in one batch (the concurrency cap).
    pub max_num_seqs: u32,
    /// `--max-num-batched-tokens`: the token budget of one step.
    pub max_num_batched_tokens: u32,
    /// `--enable-chunked-prefill`: split long prompts across steps.
    pub chunked_prefill: bool,
    /// Tokens of KV cache on the GPU (an 80 GB card holds about 440k tokens of Llama-3-8B).
    pub kv_cache_tokens: u64,
    /// Tokens per KV cache block (vLLM's default is 16).
    pub block_size_tokens: u32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_num_seqs: 64,
            max_num_batched_tokens: 2048,
            chunked_prefill: true,
            kv_cache_tokens: 440_000,
            block_size_tokens: 16,
        }
    }
}

/// Which step-time formula to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostModelKind {
    /// `t = step_ms + per_token_ms x tokens + per_context_token_ms x context_tokens`.
    Linear,
    /// `t = overhead + sqrt(a^2 + (b x tokens)^2) + context bytes / effective bandwidth`.
    Roofline,
}

/// The step-time cost model. Fields that do not belong to `model` are rejected by validation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostConfig {
    /// `linear` or `roofline`.
    pub model: CostModelKind,
    /// Roofline: a named calibration (`llama-3-8b-a100`, `llama-3-8b-h100`); fields below override it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Linear: fixed time of every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_ms: Option<f64>,
    /// Linear: time per token computed in the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_token_ms: Option<f64>,
    /// Linear: time per token of context attention reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_context_token_ms: Option<f64>,
    /// Both: time per request outside the engine (HTTP, the API server), which a client-side
    /// TTFT and E2E include and vLLM's own metrics do not. 0 if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend_ms: Option<f64>,
    /// Both: time per prompt and output token outside the engine (tokenising, detokenising).
    /// 0 if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend_per_token_ms: Option<f64>,
    /// Both: CPU time per sequence in the step (its share of scheduling, input preparation,
    /// sampling and detokenising). Linear: 0 if absent; roofline: the preset's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_seq_ms: Option<f64>,
    /// Roofline: fixed per-step overhead (scheduling, sampling, kernel launches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_ms: Option<f64>,
    /// Roofline: the weight-bound floor `a` of a step (its time with one token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_step_ms: Option<f64>,
    /// Roofline: the compute-bound slope `b` (time per token in a large step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_ms_per_token: Option<f64>,
    /// Roofline: KV cache bytes per token of context (Llama-3-8B: 131072).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_bytes_per_token: Option<f64>,
    /// Roofline: peak HBM bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm_gb_s: Option<f64>,
    /// Roofline: fraction of peak bandwidth that attention reads achieve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_efficiency: Option<f64>,
}

impl Default for CostConfig {
    fn default() -> Self {
        CostConfig::roofline("llama-3-8b-a100")
    }
}

impl CostConfig {
    /// A roofline cost model from a named preset.
    pub fn roofline(preset: &str) -> Self {
        CostConfig {
            model: CostModelKind::Roofline,
            preset: Some(preset.to_string()),
            step_ms: None,
            per_token_ms: None,
            per_context_token_ms: None,
            per_seq_ms: None,
            frontend_ms: None,
            frontend_per_token_ms: None,
            overhead_ms: None,
            min_step_ms: None,
            compute_ms_per_token: None,
            kv_bytes_per_token: None,
            hbm_gb_s: None,
            bandwidth_efficiency: None,
        }
    }

    /// A linear cost model; `linear(10.0, 0.0, 0.0)` is a constant 10 ms step.
    pub fn linear(step_ms: f64, per_token_ms: f64, per_context_token_ms: f64) -> Self {
        CostConfig {
            model: CostModelKind::Linear,
            step_ms: Some(step_ms),
            per_token_ms: Some(per_token_ms),
            per_context_token_ms: Some(per_context_token_ms),
            preset: None,
            ..CostConfig::roofline("")
        }
    }
}

/// The shape of a token-count distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DistKind {
    /// Always `value`.
    Fixed,
    /// Uniform on `min..=max`.
    Uniform,
    /// Geometric on 1, 2, 3, ... with `mean` (optionally capped at `max`).
    Geometric,
    /// Lognormal with `mean` and log-space `sigma`, rounded, at least 1 (optionally capped at `max`).
    Lognormal,
}

/// A distribution of token counts. Fields that do not belong to `dist` are rejected by validation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistConfig {
    /// `fixed`, `uniform`, `geometric` or `lognormal`.
    pub dist: DistKind,
    /// Fixed: the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u64>,
    /// Uniform: the smallest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    /// Uniform: the largest value; geometric and lognormal: an optional cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    /// Geometric and lognormal: the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// Lognormal: the standard deviation of the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
}

impl DistConfig {
    /// Always `value` tokens.
    pub fn fixed(value: u64) -> Self {
        DistConfig { dist: DistKind::Fixed, value: Some(value), min: None, max: None, mean: None, sigma: None }
    }
    /// Uniform on `min..=max`.
    pub fn uniform(min: u64, max: u64) -> Self {
        DistConfig { dist: DistKind::Uniform, min: Some(min), max: Some(max), ..Self::fixed(0) }.without_value()
    }
    /// Geometric on 1, 2, ... with the given mean.
    pub fn geometric(mean: f64) -> Self {
        DistConfig { dist: DistKind::Geometric, mean: Some(mean), ..Self::fixed(0) }.without_value()
    }
    /// Lognormal with the given mean and log-space sigma, capped at `max`.
    pub fn lognormal(mean: f64, sigma: f64, max: Option<u64>) -> Self {
        DistConfig { dist: DistKind::Lognormal, mean: Some(mean), sigma: Some(sigma), max, ..Self::fixed(0) }
            .without_value()
    }
    fn without_value(mut self) -> Self {
        self.value = None;
        self
    }
}

/// A named workload shape used by the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadPreset {
    /// Conversational traffic: prompts and answers of similar length.
    Chat,
    /// Retrieval-augmented generation: long prompts, short answers (about 30:1).
    Rag,
    /// ShareGPT-like conversations: prompt and output lengths drawn together from a table
    /// (`scenario::SHAREGPT_LIKE`), as `vllm bench serve --dataset-name sharegpt` samples them.
    /// Built with the `empirical` feature, as the CLI is; the page's wasm is not, so there
    /// "sharegpt" is refused as a preset it does not know, like any other.
    #[cfg(feature = "empirical")]
    Sharegpt,
}

/// Request sizes: a preset, explicit distributions, or a preset with one side overridden.
///
/// An absent `workload` is the chat preset; a given one has exactly the fields it names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// `chat` or `rag`; explicit distributions below override its halves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<WorkloadPreset>,
    /// Prompt length in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<DistConfig>,
    /// Output length in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<DistConfig>,
    /// Prompt and output lengths drawn together: `[[prompt_tokens, output_tokens, weight], ...]`,
    /// each row drawn with probability in proportion to its weight, so the two lengths keep
    /// their correlation. An output of 0 tokens runs as 1 (vLLM emits at least the first).
    /// (Built with the `empirical` feature, as the CLI is; the page's wasm is not.)
    #[cfg(feature = "empirical")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empirical: Option<Vec<(u64, u64, f64)>>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::preset(WorkloadPreset::Chat)
    }
}

impl WorkloadConfig {
    /// Explicit prompt and output distributions.
    pub fn explicit(prompt_tokens: DistConfig, output_tokens: DistConfig) -> Self {
        WorkloadConfig {
            preset: None,
            prompt_tokens: Some(prompt_tokens),
            output_tokens: Some(output_tokens),
            #[cfg(feature = "empirical")]
            empirical: None,
        }
    }
    /// Prompt and output lengths drawn together from `[prompt, output, weight]` rows.
    #[cfg(feature = "empirical")]
    pub fn empirical(rows: Vec<(u64, u64, f64)>) -> Self {
        WorkloadConfig { preset: None, prompt_tokens: None, output_tokens: None, empirical: Some(rows) }
    }
    /// A named preset.
    pub fn preset(preset: WorkloadPreset) -> Self {
        WorkloadConfig {
            preset: Some(preset),
            prompt_tokens: None,
            output_tokens: None,
            #[cfg(feature = "empirical")]
            empirical: None,
        }
    }
}

/// Open or closed loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadMode {
    /// Independent arrivals at a rate, whatever the server does.
    Open,
    /// A fixed population of users, each waiting for its answer and thinking before the next.
    Closed,
    /// `run.requests` requests at once (an infinite rate), then the drain; statistics cover all of
    /// them. `vllm bench serve --request-rate inf --num-prompts N`, with `max_concurrency` as its
    /// `--max-concurrency C`: at most C in flight, each finished one replaced at once by the next
    /// (a closed loop of C users with no think time, for N requests).
    Burst,
}

/// How think times are drawn in a closed loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkDist {
    /// Exponential with mean `think_time_s` (the default).
    #[default]
    Exponential,
    /// Exactly `think_time_s`.
    Fixed,
}

/// The load. Fields that do not belong to `mode` are rejected by validation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadConfig {
    /// `open` or `closed`.
    pub mode: LoadMode,
    /// Open: arrival rate in requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_rps: Option<f64>,
    /// Open: rate as a fraction of the replica's capacity. Closed: picks `users` so that, at the
    /// unloaded latency, they would offer this fraction of capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_load: Option<f64>,
    /// Open: shape of gamma inter-arrival gaps (1 = Poisson; below 1 is burstier), as vLLM's benchmark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burstiness: Option<f64>,
    /// Closed: the number of users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<u32>,
    /// Closed: mean think time between an answer and the user's next request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time_s: Option<f64>,
    /// Closed: `exponential` (default) or `fixed` think times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_dist: Option<ThinkDist>,
    /// Burst: at most this many requests in flight (`vllm bench serve --max-concurrency`); absent,
    /// every request arrives at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// Open: the rate over time, as a multiple of `rate_rps` (or of `offered_load` x capacity):
    /// a step, a ramp, a diurnal curve or a spike. Absent, the rate is constant. (Built with the
    /// `traffic` feature, as the CLI is; the page's wasm is not.)
    #[cfg(feature = "traffic")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<TrafficConfig>,
}

impl Default for LoadConfig {
    fn default() -> Self {
        LoadConfig::open_offered(0.8)
    }
}

impl LoadConfig {
    /// Poisson arrivals at `rate_rps`.
    pub fn open_rate(rate_rps: f64) -> Self {
        LoadConfig { rate_rps: Some(rate_rps), offered_load: None, ..Self::open_offered(0.0) }
    }
    /// Poisson arrivals at a fraction of capacity.
    pub fn open_offered(offered_load: f64) -> Self {
        LoadConfig {
            mode: LoadMode::Open,
            rate_rps: None,
            offered_load: Some(offered_load),
            burstiness: None,
            users: None,
            think_time_s: None,
            think_dist: None,
            max_concurrency: None,
            #[cfg(feature = "traffic")]
            traffic: None,
        }
    }
    /// `users` users with exponential think times of mean `think_time_s`.
    pub fn closed(users: u32, think_time_s: f64) -> Self {
        LoadConfig {
            mode: LoadMode::Closed,
            users: Some(users),
            think_time_s: Some(think_time_s),
            offered_load: None,
            ..Self::open_offered(0.0)
        }
    }
    /// Every request at once, at most `max_concurrency` in flight if given.
    pub fn burst(max_concurrency: Option<u32>) -> Self {
        LoadConfig { mode: LoadMode::Burst, offered_load: None, max_concurrency, ..Self::open_offered(0.0) }
    }
}

/// Service-level objectives; a request is good when it meets both (inclusive).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SloConfig {
    /// Time to first token.
    pub ttft_ms: f64,
    /// Time per output token (the request's mean inter-token gap).
    pub tpot_ms: f64,
    /// What the SLO knee of a sweep is judged on.
    pub knee: KneeRule,
}

impl Default for SloConfig {
    fn default() -> Self {
        SloConfig { ttft_ms: 1000.0, tpot_ms: 50.0, knee: KneeRule::Attainment }
    }
}

/// What a sweep's SLO knee is judged on: the highest load (of an unbroken run from the lowest)
/// whose requests meet the SLOs by this rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KneeRule {
    /// At least the attainment target (90% by default, DistServe's) of requests meet both SLOs.
    #[default]
    Attainment,
    /// TTFT p99 and TPOT p99 are both within their SLOs: an SLO stated on p99.
    P99,
}

/// Run length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Requests simulated, warm-up included.
    pub requests: u32,
    /// The first requests (by arrival) are simulated but left out of statistics;
    /// by default a tenth of `requests`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_requests: Option<u32>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { requests: 5000, warmup_requests: None }
    }
}

impl RunConfig {
    /// The warm-up actually used.
    pub fn warmup(&self) -> u32 {
        self.warmup_requests.unwrap_or(self.requests / 10)
    }
}

impl Config {
    /// Parses a config from JSON text; errors name the field path, or the line and column of a
    /// syntax error. A leading UTF-8 byte-order mark is skipped, and a key given twice in one
    /// object is an error (JSON leaves it undefined; silently keeping the last would hide a typo).
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        from_json(text)
    }

    /// The config as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a Config always serializes")
    }
}

/// Parses a JSON object into one of the schema's types, naming the field of the first problem.
pub(crate) fn from_json<T: serde::de::DeserializeOwned + Serialize>(text: &str) -> Result<T, ConfigError> {
    {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if !text.trim_start().starts_with('{') {
            // Valid JSON that is not an object, or not JSON at all: say which.
            return Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Ok(_) => ConfigError::new("", "the config must be a JSON object ({ ... })"),
                Err(e) => syntax_error(&e),
            });
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let config: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            if e.inner().is_syntax() || e.inner().is_eof() {
                // serde_json calls some type errors syntax errors (a number where an enum's
                // word goes): if the text is valid JSON, find the field through a parsed value.
                return match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(value) => type_error::<T>(value),
                    Err(e) => syntax_error(&e),
                };
            }
            let mut path = path_of(e.path());
            let message = strip_position(&e.into_inner().to_string());
            // serde names the object, not the key given twice: point at the key itself.
            if let Some(key) = message.strip_prefix("duplicate field `").and_then(|rest| rest.split('`').next()) {
                path = if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
                return ConfigError::new(path, format!("given twice; keep one `{key}`"));
            }
            ConfigError::new(path, message)
        })?;
        de.end().map_err(|e| syntax_error(&e))?;
        // serde's derive also takes a struct as the list of its fields in order; the page's
        // reader does not, and neither does this: a struct is an object of named fields.
        let given: serde_json::Value = serde_json::from_str(text).map_err(|e| syntax_error(&e))?;
        let read = serde_json::to_value(&config).expect("the schema's types serialize");
        if let Some(path) = struct_given_as_list(&given, &read, String::new()) {
            return Err(ConfigError::new(path, "invalid type: sequence, expected an object of named fields"));
        }
        Ok(config)
    }
}

/// The path of the first place where `given` has a list and `read` (what it read as, written
/// back) an object: a struct written as a list of its fields.
fn struct_given_as_list(given: &serde_json::Value, read: &serde_json::Value, path: String) -> Option<String> {
    use serde_json::Value::{Array, Object};
    let at = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
    match (given, read) {
        (Array(_), Object(_)) => Some(path),
        (Object(given), Object(read)) => {
            given.iter().find_map(|(key, value)| read.get(key).and_then(|r| struct_given_as_list(value, r, at(key))))
        }
        (Array(given), Array(read)) => given
            .iter()
            .zip(read)
            .enumerate()
            .find_map(|(i, (g, r))| struct_given_as_list(g, r, format!("{path}[{i}]"))),
        _ => None,
    }
}

/// The error of deserializing a parsed value, with its field path.
fn type_error<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> ConfigError {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(_) => ConfigError::new("", "the config could not be read"),
        Err(e) => ConfigError::new(path_of(e.path()), e.into_inner().to_string()),
    }
}

/// A field path as errors print it: empty for the whole config (serde_path_to_error says `.`).
fn path_of(path: &serde_path_to_error::Path) -> String {
    let path = path.to_string();
    if path == "." { String::new() } else { path }
}

fn syntax_error(e: &serde_json::Error) -> ConfigError {
    let what = if e.is_eof() { "unexpected end of input".to_string() } else { strip_position(&e.to_string()) };
    ConfigError::new("", format!("invalid JSON at line {}, column {}: {what}", e.line(), e.column()))
}

/// serde_json appends " at line L column C"; the path already says where, so drop it.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

//! A lab's settings, one row each: the Config field it sets, the page's names for it and the
//! control that shows its errors.
//!
//! The page keys attributes and its URL state by these rows (a Config path such as
//! `engine.max_num_seqs`, or the short attribute alias `max-num-seqs`) and marks the control
//! whose row carries an error's `path`. It reads a value's text by the row's kind alone; the
//! engine judges the value, so a rule about a field is stated once, in `Config::validate`.

use serde::Serialize;

use crate::scenario::MAX_REQUESTS;

/// How the page reads a setting's text. The engine judges the value (a whole number, a range).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A decimal number.
    Number,
    /// One of the row's `choices`.
    Choice,
    /// A boolean attribute: present, `true` or `1` is on; `false` or `0` is off.
    Flag,
}

/// One setting of a lab.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Setting {
    /// The Config field it sets, as the engine's errors name it; `None` for a view setting no run
    /// depends on.
    pub path: Option<&'static str>,
    /// The element's short attribute name: an alias of the path.
    pub attribute: &'static str,
    /// The key in the lab's state (`schema::Defaults`, camelCase).
    pub key: &'static str,
    /// How its text is read.
    pub kind: Kind,
    /// For a choice: the values it may take.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<&'static str>,
    /// The page's control whose alert shows this setting's errors; `None`: the general alert.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<&'static str>,
    /// Config fields the page derives from this setting, whose errors belong to its control.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub derived: &'static [&'static str],
}

/// The offered-load slider's range, as fractions of capacity: a lab (kneelab-lab) refuses a load
/// above it.
pub const LOAD_MIN: f64 = 0.0;
/// See [`LOAD_MIN`].
pub const LOAD_MAX: f64 = 1.2;

/// Requests per run in a lab, fewest and most (kneelab-lab refuses others): more is smoother but
/// slower, kept where dragging stays fluid (the engine's own cap is `MAX_REQUESTS`).
pub const LAB_REQUESTS: (u32, u32) = (500, 20_000);

const _: () = assert!(LAB_REQUESTS.1 <= MAX_REQUESTS);

fn row(path: Option<&'static str>, attribute: &'static str, key: &'static str, kind: Kind) -> Setting {
    Setting { path, attribute, key, kind, choices: Vec::new(), control: None, derived: &[] }
}

impl Setting {
    fn choices(self, choices: Vec<&'static str>) -> Self {
        Setting { choices, ..self }
    }

    fn control(self, control: &'static str) -> Self {
        Setting { control: Some(control), ..self }
    }

    fn derived(self, derived: &'static [&'static str]) -> Self {
        Setting { derived, ..self }
    }
}

/// Every setting, in the order the page writes them into a link. `workloads`, `presets` and
/// `knee_rules` are the schema's names for those choices.
pub fn settings(
    workloads: Vec<&'static str>,
    presets: Vec<&'static str>,
    knee_rules: Vec<&'static str>,
) -> Vec<Setting> {
    use Kind::{Choice, Flag, Number};
    vec![
        row(Some("load.offered_load"), "load", "load", Number).control("offered-load").derived(&["load.users"]),
        row(Some("load.mode"), "mode", "mode", Choice).choices(vec!["open", "closed"]).control("closed-loop"),
        row(Some("workload.preset"), "workload", "workload", Choice).choices(workloads).control("workload"),
        row(Some("cost.preset"), "preset", "preset", Choice).choices(presets).control("preset"),
        row(Some("engine.max_num_seqs"), "max-num-seqs", "maxNumSeqs", Number).control("max-num-seqs"),
        row(Some("engine.chunked_prefill"), "chunked-prefill", "chunkedPrefill", Flag).control("chunked-prefill"),
        row(Some("engine.max_num_batched_tokens"), "max-num-batched-tokens", "maxNumBatchedTokens", Number)
            .control("max-num-batched-tokens"),
        row(Some("slo.ttft_ms"), "slo-ttft-ms", "sloTtftMs", Number).control("slo-ttft-ms"),
        row(Some("slo.tpot_ms"), "slo-tpot-ms", "sloTpotMs", Number).control("slo-tpot-ms"),
        row(Some("load.think_time_s"), "think-time-s", "thinkTimeS", Number).control("offered-load"),
        row(Some("load.burstiness"), "burstiness", "burstiness", Number).control("burstiness"),
        row(Some("engine.kv_cache_tokens"), "kv-cache-tokens", "kvCacheTokens", Number).control("kv-cache-tokens"),
        row(Some("run.requests"), "requests", "requests", Number),
        row(Some("seed"), "seed", "seed", Number),
        row(Some("slo.knee"), "knee-rule", "kneeRule", Choice).choices(knee_rules).control("knee-rule"),
        row(None, "latency-scale", "latencyScale", Choice).choices(vec!["linear", "log"]).control("latency-log"),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::Kind;
    use crate::Config;
    use crate::config::{LoadConfig, WorkloadPreset};
    use crate::schema::{lesson_config, schema};

    /// The lesson's config as JSON text, with the field at `path` set to `value`.
    fn with(path: &str, value: serde_json::Value) -> String {
        let config = lesson_config(WorkloadPreset::Rag, LoadConfig::open_offered(0.85), 4000);
        let mut json: serde_json::Value = serde_json::from_str(&config.to_json()).unwrap();
        let field = path.split('.').fold(&mut json, |at, key| &mut at[key]);
        *field = value;
        json.to_string()
    }

    #[test]
    fn every_path_is_a_config_field_the_engine_names_in_its_errors() {
        let schema = schema();
        let defaults = serde_json::to_value(&schema.defaults).unwrap();
        for s in &schema.settings {
            // The field takes the lab's starting value (an unknown field would be refused)...
            if let Some(path) = s.path {
                Config::from_json(&with(path, defaults[s.key].clone())).unwrap_or_else(|e| panic!("{path}: {e}"));
            }
            // ...and the engine's error about a bad one carries the path the page marks a control by.
            for path in s.path.iter().chain(s.derived) {
                let err = Config::from_json(&with(path, serde_json::json!({ "not": "a value" }))).unwrap_err();
                assert_eq!(err.path, *path, "{}: {err}", s.attribute);
            }
        }
    }

    #[test]
    fn rows_name_each_state_key_once_and_start_from_a_choice() {
        let schema = schema();
        let defaults = serde_json::to_value(&schema.defaults).unwrap();
        let keys: BTreeSet<_> = schema.settings.iter().map(|s| s.key).collect();
        let state: BTreeSet<_> = defaults.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, state);
        // A name (a Config path or an alias; `seed` is both) answers for one row only.
        let mut owner = BTreeMap::new();
        for s in &schema.settings {
            for name in s.path.into_iter().chain([s.attribute]) {
                assert!(*owner.entry(name).or_insert(s.key) == s.key, "{name} names two settings");
            }
        }
        for s in &schema.settings {
            let default = &defaults[s.key];
            match s.kind {
                Kind::Choice => assert!(s.choices.contains(&default.as_str().unwrap()), "{}", s.attribute),
                Kind::Number => assert!(default.is_number(), "{}", s.attribute),
                Kind::Flag => assert!(default.is_boolean(), "{}", s.attribute),
            }
        }
    }
}

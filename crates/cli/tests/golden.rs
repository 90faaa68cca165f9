//! Today's behaviour, pinned: `kneelab run` on every config in `examples/` against a stored
//! Summary (`tests/golden/*.json`; `UPDATE_EXPECT=1 cargo test -p kneelab-cli --test golden`
//! rewrites them after a change that is meant to move the numbers), and the README's example
//! output against the same run, to the digits the README shows.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `kneelab run examples/<name>.json`'s stdout.
fn run_example(name: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kneelab"))
        .args(["run", &format!("examples/{name}.json")])
        .current_dir(root())
        .output()
        .expect("kneelab runs");
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
fn every_example_gives_its_stored_summary() {
    expect_test::expect_file!["golden/chat.json"].assert_eq(&run_example("chat"));
    expect_test::expect_file!["golden/rag.json"].assert_eq(&run_example("rag"));
    expect_test::expect_file!["golden/mm1.json"].assert_eq(&run_example("mm1"));
    expect_test::expect_file!["golden/closed-loop.json"].assert_eq(&run_example("closed-loop"));
    expect_test::expect_file!["golden/burst.json"].assert_eq(&run_example("burst"));
    // A compressed day (load.traffic): a diurnal curve peaking at 95% of capacity.
    expect_test::expect_file!["golden/day.json"].assert_eq(&run_example("day"));
    // Written by the request-by-request engine before the lazy cohort: the preemption path.
    expect_test::expect_file!["golden/kv-tight.json"].assert_eq(&run_example("kv-tight"));
    // The fleet's totals (a fleet config, run by `kneelab fleet`).
    let fleet = Command::new(env!("CARGO_BIN_EXE_kneelab"))
        .current_dir(root())
        .args(["fleet", "examples/fleet.json"])
        .output()
        .unwrap();
    assert!(fleet.status.success());
    expect_test::expect_file!["golden/fleet.txt"].assert_eq(&String::from_utf8(fleet.stdout).unwrap());
    // ...and those are every example there is.
    let mut names: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok()?.strip_suffix(".json").map(String::from))
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["burst", "chat", "closed-loop", "day", "fleet", "kv-tight", "mm1", "rag"],
        "a new example needs a golden summary here"
    );
}

/// Every number in the README's `kneelab run examples/rag.json` block, with its key path and the
/// number of decimals it is written with.
fn readme_numbers() -> Vec<(String, f64, usize)> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let start = readme.find("```jsonc").expect("the README shows a run's output in a jsonc block");
    let block = &readme[start + "```jsonc".len()..];
    let block = &block[..block.find("```").expect("the block ends")];
    let mut out = Vec::new();
    let mut path: Vec<String> = Vec::new();
    for line in block.lines() {
        let code = line.split("//").next().unwrap_or("");
        // Keys and values in order; an object's key opens a level, a closing brace ends one.
        let mut rest = code;
        while let Some(q) = rest.find('"') {
            let after = &rest[q + 1..];
            let Some(end) = after.find('"') else { break };
            let key = &after[..end];
            let tail = after[end + 1..].trim_start();
            let Some(value) = tail.strip_prefix(':') else {
                rest = &after[end + 1..];
                continue;
            };
            let value = value.trim_start();
            if let Some(inner) = value.strip_prefix('{') {
                path.push(key.to_string());
                rest = inner;
                continue;
            }
            let number: String = value.chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-').collect();
            if let Ok(v) = number.parse::<f64>() {
                let decimals = number.split('.').nth(1).map_or(0, str::len);
                let full = path.iter().chain([&key.to_string()]).cloned().collect::<Vec<_>>().join(".");
                out.push((full, v, decimals));
            }
            rest = &value[number.len().min(value.len())..];
            while let Some(close) = rest.find('}') {
                if rest[..close].contains('"') {
                    break;
                }
                path.pop();
                rest = &rest[close + 1..];
            }
        }
    }
    out
}

#[test]
fn the_readme_shows_what_the_rag_example_prints() {
    let run: Value = serde_json::from_str(&run_example("rag")).expect("JSON output");
    let numbers = readme_numbers();
    assert!(numbers.len() > 30, "found only {} numbers in the README's block", numbers.len());
    let mut wrong = Vec::new();
    for (path, shown, decimals) in numbers {
        let actual = path.split('.').try_fold(&run, |v, k| v.get(k)).and_then(Value::as_f64);
        let Some(actual) = actual else {
            wrong.push(format!("{path}: not in the output"));
            continue;
        };
        // Written to `decimals` places: the run must round to it.
        let half = 0.5 * libm::pow(10.0, -(decimals as f64)) + 1e-9;
        if (actual - shown).abs() > half {
            wrong.push(format!("{path}: README {shown}, run {actual:.*}", decimals + 2));
        }
    }
    assert!(wrong.is_empty(), "the README's example output is stale:\n{}", wrong.join("\n"));
}

//! `cargo xtask test`: the one test command (README, CI). Fails fast, step by step.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{cargo, rel, repo_root, run_step};

/// Debian's Chromium; Playwright's own browser download does not work on these machines.
const CHROMIUM: &str = "/usr/bin/chromium";
/// The port tests/playwright.config.mjs reads (and its default there).
const PORT_VAR: &str = "KNEELAB_TEST_PORT";
const DEFAULT_PORT: &str = "8123";

/// Arguments of `cargo xtask test`.
#[derive(clap::Args)]
pub struct Args {
    /// Stop after `cargo test`: skip the Playwright suite (needs node, npm and Chromium).
    #[arg(long)]
    no_browser: bool,
}

/// fmt, clippy (native and wasm32), cargo test, then the browser suite.
pub fn run(args: &Args) -> Result<()> {
    #[allow(clippy::disallowed_methods, reason = "timing the steps of a dev tool, not the simulation")]
    let started = Instant::now();
    run_step("formatting", cargo().args(["fmt", "--all", "--", "--check"]))?;
    run_step(
        "clippy (native, all targets)",
        cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]),
    )?;
    crate::web::ensure_wasm_target()?;
    run_step(
        "clippy (kneelab-web for wasm32)",
        cargo().args([
            "clippy",
            "-p",
            "kneelab-web",
            "--all-features",
            "--target",
            "wasm32-unknown-unknown",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    run_step("unit and integration tests", cargo().args(["test", "--workspace"]))?;
    if args.no_browser {
        println!("\nall Rust checks passed in {:.0?}; browser suite skipped (--no-browser)", started.elapsed());
        return Ok(());
    }
    browser_suite()
}

/// npm ci (if needed), Chromium check, release wasm build, the package, then Playwright; ends with the summary
/// line `N passed, N failed` and exits non-zero if anything failed.
fn browser_suite() -> Result<()> {
    let tests = repo_root().join("tests");
    install_node_modules(&tests)?;
    if !Path::new(CHROMIUM).exists() {
        bail!(
            "{CHROMIUM} is missing: install it with `sudo apt-get install -y chromium chromium-driver` \
             (`npx playwright install` does not work here), or run `cargo xtask test --no-browser`"
        );
    }
    // Release profile and wasm-opt, so the page's size is what ships; then the npm package the
    // embedding tests install from its tarball.
    crate::web::run(&crate::web::Args { dev: false })?;
    crate::dist::run(&crate::dist::Args { no_build: true })?;

    let report = tests.join("test-results").join("results.json");
    if report.exists() {
        fs::remove_file(&report).with_context(|| format!("removing the old {}", report.display()))?;
    }
    let port = std::env::var(PORT_VAR).unwrap_or_else(|_| DEFAULT_PORT.to_owned());
    let mut cmd = Command::new("npx");
    cmd.current_dir(&tests)
        .args(["--no", "playwright", "test", "--reporter=list,json"])
        .env(PORT_VAR, &port)
        .env("PLAYWRIGHT_JSON_OUTPUT_FILE", &report);
    println!("\n==> browser suite (Playwright, Chromium, server on port {port})\n    $ {}", crate::describe(&cmd));
    let status = cmd.status().context("could not start `npx playwright test`")?;

    let mut counts = match fs::read_to_string(&report) {
        Ok(json) => Counts::from_json_report(&json)
            .with_context(|| format!("reading Playwright's report {}", report.display()))?,
        Err(_) => {
            println!("Playwright wrote no report ({}): counting the suite as failed", rel(&report).display());
            Counts { passed: 0, failed: 1, skipped: 0 }
        }
    };
    if !status.success() && counts.failed == 0 {
        println!("Playwright exited with {status} although no test failed: counting that as a failure");
        counts.failed = 1;
    }
    if counts.failed > 0 {
        println!("browser suite failed: screenshots and traces are in {}", rel(&tests.join("test-results")).display());
    }
    println!("{}", counts.summary());
    if counts.failed > 0 {
        // Exit here so the summary line stays the last thing printed (CI reads it).
        std::process::exit(1);
    }
    Ok(())
}

/// `npm ci` in tests/ when node_modules is missing or older than package-lock.json.
fn install_node_modules(tests: &Path) -> Result<()> {
    let lock = tests.join("package-lock.json");
    // npm writes node_modules/.package-lock.json at the end of every install.
    let installed = tests.join("node_modules").join(".package-lock.json");
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let up_to_date = match (modified(&installed), modified(&lock)) {
        (Some(installed), Some(lock)) => installed >= lock,
        _ => false,
    };
    if up_to_date {
        println!("\n==> tests/node_modules is up to date with package-lock.json");
        return Ok(());
    }
    if Command::new("npm").arg("--version").output().is_err() {
        bail!(
            "npm is missing: the browser suite needs node and npm (Debian: `apt-get install -y nodejs npm`), \
             or run `cargo xtask test --no-browser`"
        );
    }
    run_step("npm ci (tests/)", Command::new("npm").current_dir(tests).arg("ci"))
}

/// Test counts from Playwright's JSON reporter.
#[derive(Debug, PartialEq, Eq)]
struct Counts {
    passed: u64,
    failed: u64,
    skipped: u64,
}

impl Counts {
    /// Reads `stats` (expected / unexpected / flaky / skipped) and top-level `errors`
    /// (failures outside any test, such as the web server not starting).
    fn from_json_report(json: &str) -> Result<Counts> {
        let report: serde_json::Value = serde_json::from_str(json)?;
        let stats = &report["stats"];
        let count = |name: &str| stats[name].as_u64().with_context(|| format!("no stats.{name} in the report"));
        let errors = report["errors"].as_array().map_or(0, |e| e.len() as u64);
        Ok(Counts {
            passed: count("expected")? + count("flaky")?,
            failed: count("unexpected")? + errors,
            skipped: count("skipped")?,
        })
    }

    /// The CI closing line: `N passed, N failed` (`, N skipped` only when some were).
    fn summary(&self) -> String {
        let mut line = format!("{} passed, {} failed", self.passed, self.failed);
        if self.skipped > 0 {
            line.push_str(&format!(", {} skipped", self.skipped));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::Counts;

    #[test]
    fn counts_from_playwright_json() {
        let cases = [
            (r#"{"stats":{"expected":3,"unexpected":0,"flaky":0,"skipped":0},"errors":[]}"#, "3 passed, 0 failed"),
            (
                r#"{"stats":{"expected":2,"unexpected":1,"flaky":1,"skipped":2},"errors":[]}"#,
                "3 passed, 1 failed, 2 skipped",
            ),
            (
                r#"{"stats":{"expected":0,"unexpected":0,"flaky":0,"skipped":0},"errors":[{"message":"webServer"}]}"#,
                "0 passed, 1 failed",
            ),
        ];
        for (json, expected) in cases {
            assert_eq!(Counts::from_json_report(json).unwrap().summary(), expected, "{json}");
        }
        assert!(Counts::from_json_report(r#"{"stats":{}}"#).is_err());
    }
}

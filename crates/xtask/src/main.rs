//! `cargo xtask`: the one place that knows how to build, serve, test and bench kneelab.
//!
//! Run `cargo xtask --help`. Each subcommand lives in its own module.

mod bench;
mod bundle;
mod compress;
mod dist;
mod fuzz;
mod modules;
mod serve;
mod test;
mod web;
mod weigh;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

/// Build, serve, test and bench the kneelab workspace.
#[derive(Parser)]
#[command(name = "xtask", bin_name = "cargo xtask", version, about)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build the wasm into www/pkg/ and the page, bundled and minified, into target/site/; print what it weighs.
    BuildWeb(web::Args),
    /// Build the lab as an npm package in dist/ and pack it to target/kneelab-VERSION.tgz.
    Dist(dist::Args),
    /// Build the page (unless --no-build) and serve it (target/site/) over HTTP.
    Serve(serve::Args),
    /// fmt, clippy (native and wasm32), cargo test, then the browser suite in tests/.
    Test(test::Args),
    /// Run the simulation benchmark (crates/sim/examples/bench.rs) in release mode.
    Bench(bench::Args),
    /// Build a lab's wasm module with its names kept and print what each part of it weighs.
    Weigh,
    /// Fuzz the config schema: a million generated configs (crates/sim/tests/fuzz.rs), release mode.
    Fuzz(fuzz::Args),
}

fn main() -> ExitCode {
    let result = match Cli::parse().task {
        Task::BuildWeb(args) => web::run(&args),
        Task::Dist(args) => dist::run(&args),
        Task::Serve(args) => serve::run(&args),
        Task::Test(args) => test::run(&args),
        Task::Bench(args) => bench::run(&args),
        Task::Fuzz(args) => fuzz::run(&args),
        Task::Weigh => weigh::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One readable line with its causes; no backtrace even when RUST_BACKTRACE is set.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (this crate lives in `crates/xtask`).
fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/xtask sits two levels below the workspace root")
}

/// A `cargo` command run from the workspace root, using the same cargo that runs us.
fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(cargo);
    cmd.current_dir(repo_root());
    cmd
}

/// Prints a step header, runs `cmd` with inherited stdio and fails with a clear message if it fails.
fn run_step(title: &str, cmd: &mut Command) -> Result<()> {
    println!("\n==> {title}\n    $ {}", describe(cmd));
    let status = cmd.status().with_context(|| format!("could not start `{}`", describe(cmd)))?;
    if !status.success() {
        bail!("step failed: {title} (`{}` exited with {status})", describe(cmd));
    }
    Ok(())
}

/// The command line of `cmd`, for messages.
fn describe(cmd: &Command) -> String {
    let program = Path::new(cmd.get_program()).file_name().unwrap_or(cmd.get_program()).to_string_lossy().into_owned();
    std::iter::once(program)
        .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `path` relative to the workspace root, for messages.
fn rel(path: &Path) -> PathBuf {
    path.strip_prefix(repo_root()).unwrap_or(path).to_path_buf()
}

/// Every file under `dir`, recursively.
fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

/// A build tool from the browser suite's pinned npm packages (tests/package-lock.json):
/// `tests/node_modules/.bin/NAME`. On a fresh clone it is not there yet: the packages are
/// installed from the npm registry first (`npm ci --prefix tests`), so every build that serves or
/// ships the page ships it optimised. `None` (with a warning) when npm itself is missing.
fn node_tool(name: &str) -> Result<Option<PathBuf>> {
    let tool = repo_root().join("tests/node_modules/.bin").join(name);
    if tool.exists() {
        return Ok(Some(tool));
    }
    println!(
        "{name} is missing ({}): installing it from the npm registry with the browser suite's tools",
        rel(&tool).display()
    );
    if Command::new("npm").arg("--version").output().is_err() {
        println!("warning: npm is missing, so {name} cannot be installed. Install Node.js and npm, then build again.");
        return Ok(None);
    }
    let mut npm = Command::new("npm");
    npm.args(["ci", "--no-audit", "--no-fund", "--prefix"]).arg(repo_root().join("tests"));
    run_step(&format!("npm ci --prefix tests (for {name})"), &mut npm)?;
    if !tool.exists() {
        bail!("npm ci --prefix tests installed no {}", rel(&tool).display());
    }
    Ok(Some(tool))
}

//! `cargo xtask bench`: the simulation benchmark, always in release mode.

use anyhow::Result;

/// Arguments of `cargo xtask bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Passed on to the bench example: `cargo xtask bench -- --help`.
    #[arg(last = true)]
    args: Vec<String>,
}

/// Runs `cargo run --release -p kneelab-sim --example bench -- ARGS`.
pub fn run(args: &Args) -> Result<()> {
    crate::run_step(
        "simulation benchmark (release)",
        crate::cargo().args(["run", "--release", "-p", "kneelab-sim", "--example", "bench", "--"]).args(&args.args),
    )
}

//! `cargo xtask fuzz`: the config fuzzer (crates/sim/tests/fuzz.rs) at full size, in release mode,
//! under a memory limit, so an abort on a huge allocation fails the run as a panic would.

use std::process::Command;

use anyhow::Result;

/// Arguments of `cargo xtask fuzz`.
#[derive(clap::Args)]
pub struct Args {
    /// How many generated configs to run (`cargo test` runs 3,000).
    #[arg(long, default_value_t = 1_000_000)]
    cases: u64,
    /// Campaign seed: the configs follow from it (`cargo test` runs seed 0), so a new seed
    /// explores configs no earlier campaign tried.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Address-space limit of the fuzzing process, in MiB (`ulimit -v`).
    #[arg(long, default_value_t = 8192)]
    memory_mib: u64,
}

/// Builds the fuzz test in release mode, then runs it with `KNEELAB_FUZZ_CASES` under the limit.
pub fn run(args: &Args) -> Result<()> {
    let test = ["test", "--release", "-p", "kneelab-sim", "--test", "fuzz"];
    crate::run_step("build the fuzzer (release)", crate::cargo().args(test).arg("--no-run"))?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new("sh");
    cmd.current_dir(crate::repo_root())
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", args.memory_mib * 1024))
        .arg(cargo)
        .args(test)
        .args(["--", "--nocapture"])
        .env("KNEELAB_FUZZ_CASES", args.cases.to_string())
        .env("KNEELAB_FUZZ_SEED", args.seed.to_string());
    crate::run_step(
        &format!(
            "fuzz {} configs from seed {} (at most {} MiB of address space)",
            args.cases, args.seed, args.memory_mib
        ),
        &mut cmd,
    )
}

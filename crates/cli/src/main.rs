//! `kneelab`: the lesson's simulated vLLM replica from a terminal. `run` one config, `sweep` it
//! over offered load to find the knee, `size` a fleet by Little's Law, `calibrate` against
//! published measurements, `serve-metrics` to serve a running replica's `/metrics`, `probe` to
//! read a real one's. Every subcommand reads the same JSON Config as the page; all simulation
//! logic lives in kneelab-sim.

mod calibrate;
mod error;
mod fleet;
mod input;
mod probe;
mod run;
mod serve_metrics;
mod size;
mod sweep;
mod wall;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

use crate::error::CliError;

const AFTER_HELP: &str = "\
Examples:
  kneelab run examples/rag.json                       one run, its Summary as JSON
  kneelab run - --seed 7 < examples/chat.json         the config from stdin, another seed
  kneelab sweep examples/rag.json --format csv        latency and goodput over offered load, and the knee
  kneelab size --max-num-seqs 64 --batch-s 8 --peak-qps 100
  kneelab size --config examples/rag.json --peak-qps 40
  kneelab calibrate                                   the replica against published vLLM measurements
  kneelab serve-metrics examples/chat.json --speed 10 its vLLM /metrics on http://127.0.0.1:8000, 10x real time
  kneelab probe localhost:8000 --config examples/chat.json
                                                      a real (or served) replica's /metrics over a window, on its knee

CONFIG is a JSON file (see examples/ and the schema in crates/sim/src/config.rs), or - for stdin.
Bad input prints one line, `kneelab: error: ...`, naming the file and field, and exits with code 2.";

/// A deterministic simulation of one vLLM replica: latency, throughput, the knee, and how many
/// replicas to provision.
#[derive(Debug, Parser)]
#[command(name = "kneelab", version, after_help = AFTER_HELP, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Run(run::RunArgs),
    Sweep(sweep::SweepArgs),
    Size(size::SizeArgs),
    Calibrate(calibrate::CalibrateArgs),
    ServeMetrics(serve_metrics::ServeMetricsArgs),
    Probe(probe::ProbeArgs),
    Fleet(fleet::FleetArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    let result = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Size(args) => size::run(&args),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::ServeMetrics(args) => serve_metrics::run(&args),
        Command::Probe(args) => probe::run(&args),
        Command::Fleet(args) => fleet::run(&args),
    };
    match result.and_then(|out| emit(&out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}

/// Writes the result to stdout. A reader that stops early (`| head`) is not an error.
fn emit(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(CliError::output(&e)),
        _ => Ok(()),
    }
}

/// Help and version go out as clap prints them. Every usage error (a bad value, an unknown flag,
/// a missing argument, no subcommand) becomes the same one-line error, exit code 2, as every
/// other bad input.
fn clap_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => CliError::input(
            "a subcommand is required: run, sweep, size, calibrate, serve-metrics, probe or fleet; see kneelab --help",
        )
        .report(),
        _ => {
            // clap's first paragraph, e.g. "error: invalid value 'xml' for '--format <FORMAT>'\n  [possible
            // values: json, csv]", on one line; its usage block and "For more information" hint
            // become one pointer to --help.
            let text = e.to_string();
            let first: Vec<&str> = text.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
            let message = first.join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            CliError::input(format!("{message}; see kneelab --help")).report()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}

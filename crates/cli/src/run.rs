//! `kneelab run CONFIG`: one simulation, its Summary as JSON.

use std::path::PathBuf;

use clap::Args;

use crate::error::{CliError, warn};
use crate::input;

const AFTER_HELP: &str = "\
Examples:
  kneelab run examples/rag.json                   RAG traffic at 90% of capacity
  kneelab run examples/mm1.json --compact         the textbook M/M/1 queue, on one line
  kneelab run - --seed 7 < examples/chat.json     the config from stdin, another seed
  kneelab run examples/rag.json | jq .ttft_s      just the TTFT percentiles

The Summary has throughput_rps, goodput_rps, slo_attainment, ttft_s / tpot_s / itl_s / e2e_s /
queue_s (each mean, p50, p90, p99, in seconds), the time-averaged num_requests_running_mean and
num_requests_waiting_mean, littles_law {l, lambda_rps, w_s, rel_error} as measured, and the
replica's capacity_rps. The same config and seed always print the same bytes.";

/// Simulate one config and print its Summary as JSON.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct RunArgs {
    /// The config: a JSON file, or - to read it from stdin.
    #[arg(value_name = "CONFIG")]
    config: PathBuf,
    /// Seed of every random stream, overriding the config's `seed`.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// One-line JSON instead of pretty-printed.
    #[arg(long)]
    compact: bool,
}

/// Runs the config and returns the Summary as JSON text.
pub fn run(args: &RunArgs) -> Result<String, CliError> {
    let mut loaded = input::load(&args.config)?;
    if let Some(seed) = args.seed {
        loaded.config.seed = seed;
    }
    let summary = kneelab_sim::simulate(&loaded.config).map_err(|e| CliError::config(&loaded.source, &e))?;
    if summary.truncated {
        warn(&format!(
            "{}: the run hit one of the engine's work caps (steps, or requests in the system) and stopped early \
             (truncated: true); the statistics cover only the {} requests that completed; lower the load or \
             run.requests",
            loaded.source, summary.requests_completed
        ));
    }
    if !summary.truncated
        && let Some(reason) = summary.unsteady_reason()
    {
        warn(&format!(
            "{}: not steady state (steady_state: false): {reason}; treat its means and littles_law with care",
            loaded.source
        ));
    }
    let json = if args.compact { serde_json::to_string(&summary) } else { serde_json::to_string_pretty(&summary) };
    json.map(|j| j + "\n").map_err(|e| CliError::input(format!("cannot print the summary as JSON: {e}")))
}

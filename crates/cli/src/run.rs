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
  kneelab run examples/chat.json --request-rate inf --num-prompts 1000 --max-concurrency 64
                                                  the load as vllm bench serve gives it

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
    #[command(flatten)]
    bench: BenchLoad,
}

/// The load as `vllm bench serve` takes it, overriding the config's `load` (and `run.requests`).
#[derive(Debug, Args)]
pub struct BenchLoad {
    /// Requests per second, Poisson or gamma-spaced (`--burstiness`); `inf` sends every request at
    /// once, then drains (the config's load becomes mode "burst"). As vllm bench serve's
    /// --request-rate.
    #[arg(long, value_name = "RATE", value_parser = parse_rate, allow_negative_numbers = true)]
    request_rate: Option<f64>,
    /// Gamma shape of the gaps between arrivals: 1 is Poisson, lower is burstier. As vllm bench
    /// serve's --burstiness; needs a finite --request-rate.
    #[arg(long, value_name = "B", requires = "request_rate", allow_negative_numbers = true)]
    burstiness: Option<f64>,
    /// At most this many requests in flight, each finished one replaced at once. As vllm bench
    /// serve's --max-concurrency; only with --request-rate inf (the default when it is given
    /// alone), as a finite rate with a cap is not modelled.
    #[arg(long, value_name = "C")]
    max_concurrency: Option<u32>,
    /// Requests to simulate (the config's run.requests; its warm-up becomes the default, a tenth,
    /// and a burst has none). As vllm bench serve's --num-prompts.
    #[arg(long, value_name = "N")]
    num_prompts: Option<u32>,
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text {
        "inf" | "Inf" | "infinity" => Ok(f64::INFINITY),
        _ => text.parse::<f64>().map_err(|_| format!("expected requests per second or inf, got {text:?}")),
    }
}

impl BenchLoad {
    /// Applies the flags to `config`; an error names the flag.
    fn apply(&self, config: &mut kneelab_sim::Config) -> Result<(), CliError> {
        use kneelab_sim::LoadConfig;
        if let Some(n) = self.num_prompts {
            config.run.requests = n;
            config.run.warmup_requests = None;
        }
        let burst = self.request_rate.is_some_and(f64::is_infinite)
            || (self.request_rate.is_none() && self.max_concurrency.is_some());
        if burst {
            if self.burstiness.is_some() {
                return Err(CliError::input(
                    "--burstiness needs a finite --request-rate (inf sends every request at once)",
                ));
            }
            config.load = LoadConfig::burst(self.max_concurrency);
            // A burst measures every request it sends.
            config.run.warmup_requests = None;
        } else if let Some(rate) = self.request_rate {
            if self.max_concurrency.is_some() {
                return Err(CliError::input(
                    "--max-concurrency goes with --request-rate inf here: a finite rate with a concurrency cap is not modelled",
                ));
            }
            config.load = LoadConfig { burstiness: self.burstiness, ..LoadConfig::open_rate(rate) };
        }
        Ok(())
    }
}

/// Runs the config and returns the Summary as JSON text.
pub fn run(args: &RunArgs) -> Result<String, CliError> {
    let mut loaded = input::load(&args.config)?;
    if let Some(seed) = args.seed {
        loaded.config.seed = seed;
    }
    args.bench.apply(&mut loaded.config)?;
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

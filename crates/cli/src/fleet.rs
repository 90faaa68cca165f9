//! `kneelab fleet`: a fleet of replicas behind a router and an autoscaler, over a day of
//! traffic; and `--grid`, a search over policies for the cheapest that meets the SLO.

use std::fmt::Write as _;
use std::io::{self, IsTerminal};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kneelab_sim::fleet::{FleetConfig, FleetResult, FleetTotals, Router, Signal, run_fleet};
use kneelab_sim::sweep::DEFAULT_ATTAINMENT_TARGET;
use rayon::prelude::*;

use crate::error::{CliError, warn};
use crate::input;

const AFTER_HELP: &str = "\
Examples:
  kneelab fleet examples/fleet.json
      totals: SLO attainment, goodput, GPU-hours, cost per 1,000 good requests
  kneelab fleet examples/fleet.json --format csv > day.csv
      one row per scrape: replicas ready and starting, offered rate and capacity, waiting, TTFT p99
  kneelab fleet examples/fleet.json --grid
      every router x signal x threshold x cold start, on all cores; the cheapest policy that
      meets the SLO (RAYON_NUM_THREADS sets the cores)";

/// Output of `kneelab fleet`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The totals, a few lines.
    Text,
    /// Totals and series as JSON.
    Json,
    /// The series, one row per scrape.
    Csv,
}

/// Run a fleet of replicas behind a router and an autoscaler, or search a grid of policies.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct FleetArgs {
    /// The fleet config (JSON; `-` for stdin).
    config: PathBuf,
    /// Output format (text or json with --grid).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Search router x signal x threshold x cold start for the cheapest policy meeting the SLO.
    #[arg(long)]
    grid: bool,
    /// Grid: routers to try.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [GridRouter::RoundRobin, GridRouter::PowerOfTwo, GridRouter::LeastOutstanding])]
    routers: Vec<GridRouter>,
    /// Grid: cold starts to try, in seconds (the config's if absent).
    #[arg(long, value_delimiter = ',', value_name = "S")]
    cold_starts: Vec<f64>,
    /// Grid: the share of requests that must meet both SLOs.
    #[arg(long, default_value_t = DEFAULT_ATTAINMENT_TARGET)]
    target: f64,
}

/// A router, as `--routers` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GridRouter {
    /// Each in turn.
    RoundRobin,
    /// At random.
    Random,
    /// Fewest running + waiting.
    LeastOutstanding,
    /// Fewest waiting.
    LeastWaiting,
    /// Two at random, the less loaded.
    PowerOfTwo,
    /// Least KV cache in use.
    LeastKv,
}

impl GridRouter {
    fn router(self) -> Router {
        match self {
            GridRouter::RoundRobin => Router::RoundRobin,
            GridRouter::Random => Router::Random,
            GridRouter::LeastOutstanding => Router::LeastOutstanding,
            GridRouter::LeastWaiting => Router::LeastWaiting,
            GridRouter::PowerOfTwo => Router::PowerOfTwo,
            GridRouter::LeastKv => Router::LeastKv,
        }
    }
}

/// Each signal and the scale-up thresholds the grid tries (in the signal's own unit); the
/// scale-down threshold is a quarter of it.
const GRID_SIGNALS: [(Signal, [f64; 4]); 6] = [
    (Signal::WaitingMean, [0.5, 1.0, 2.0, 4.0]),
    (Signal::WaitingMax, [2.0, 4.0, 8.0, 16.0]),
    (Signal::TtftP99, [0.25, 0.5, 1.0, 2.0]),
    (Signal::KvUsage, [0.05, 0.1, 0.2, 0.4]),
    (Signal::GpuUtil, [0.6, 0.8, 0.9, 0.99]),
    (Signal::Rate, [0.5, 0.6, 0.7, 0.8]),
];

pub fn run(args: &FleetArgs) -> Result<String, CliError> {
    let (text, source) = input::read(&args.config)?;
    let config = FleetConfig::from_json(&text).map_err(|e| CliError::config(&source, &e))?;
    config.validate().map_err(|e| CliError::config(&source, &e))?;
    if args.grid {
        return grid(args, &config, &source);
    }
    let result = run_fleet(&config).map_err(|e| CliError::config(&source, &e))?;
    truncation_warning(&source, &result.totals);
    Ok(match args.format {
        Format::Text => totals_text(&result.totals),
        Format::Json => serde_json::to_string_pretty(&result).expect("a result serializes") + "\n",
        Format::Csv => csv(&result),
    })
}

fn truncation_warning(source: &str, t: &FleetTotals) {
    if t.truncated {
        warn(&format!("{source}: a cap stopped the run early (truncated: true); the totals cover what finished"));
    }
}

fn totals_text(t: &FleetTotals) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "requests          {} ({} completed, {} met both SLOs)", t.requests, t.completed, t.good);
    let _ = writeln!(s, "SLO attainment    {:.1}%", t.attainment * 100.0);
    let _ = writeln!(s, "goodput           {:.2} req/s", t.goodput_rps);
    let _ = writeln!(s, "TTFT              mean {:.3} s, p99 {:.3} s", t.ttft_mean_s, t.ttft_p99_s);
    let _ = writeln!(
        s,
        "GPU-hours         {:.2} (peak {} replicas; {} started, {} drained)",
        t.gpu_hours, t.peak_replicas, t.scale_ups, t.scale_downs
    );
    let _ = writeln!(s, "cost              ${:.2}, ${:.4} per 1,000 good requests", t.cost_usd, t.cost_per_1k_good_usd);
    let _ = writeln!(s, "replica capacity  {:.2} req/s", t.replica_capacity_rps);
    s
}

fn csv(r: &FleetResult) -> String {
    let mut s = String::from(
        "t_s,offered_rps,arrived_rps,ready,starting,draining,capacity_rps,waiting,waiting_max,ttft_p99_s,attainment,busy,kv_usage,signal\n",
    );
    let num = |v: f64| if v.is_finite() { format!("{v}") } else { String::new() };
    for p in &r.series {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.t_s,
            p.offered_rps,
            p.arrived_rps,
            p.ready,
            p.starting,
            p.draining,
            p.capacity_rps,
            p.waiting,
            p.waiting_max,
            num(p.ttft_p99_s),
            num(p.attainment),
            p.busy,
            p.kv_usage,
            num(p.signal)
        );
    }
    s
}

/// One policy of the grid and how it did.
#[derive(serde::Serialize)]
struct Policy {
    router: Router,
    signal: Signal,
    scale_up: f64,
    scale_down: f64,
    cold_start_s: f64,
    totals: FleetTotals,
}

fn grid(args: &FleetArgs, base: &FleetConfig, source: &str) -> Result<String, CliError> {
    if !(args.target > 0.0 && args.target <= 1.0) {
        return Err(CliError::input(format!("--target: must be above 0 and at most 1, got {}", args.target)));
    }
    let colds = if args.cold_starts.is_empty() { vec![base.autoscaler.cold_start_s] } else { args.cold_starts.clone() };
    let mut configs = Vec::new();
    for &router in &args.routers {
        for (signal, ups) in GRID_SIGNALS {
            for up in ups {
                for &cold in &colds {
                    let mut c = base.clone();
                    c.router.policy = router.router();
                    c.autoscaler.signal = signal;
                    c.autoscaler.scale_up = up;
                    c.autoscaler.scale_down = up / 4.0;
                    c.autoscaler.cold_start_s = cold;
                    c.validate().map_err(|e| CliError::input(format!("--cold-starts: {}", e.message)))?;
                    configs.push(c);
                }
            }
        }
    }
    let bar = io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::with_draw_target(Some(configs.len() as u64), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("[{bar:30}] {pos}/{len} policies, {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar
    });
    let results: Result<Vec<Policy>, CliError> = configs
        .par_iter()
        .map(|c| {
            let r = run_fleet(c).map_err(|e| CliError::config(source, &e))?;
            if let Some(bar) = &bar {
                bar.inc(1);
            }
            let a = &c.autoscaler;
            Ok(Policy {
                router: c.router.policy,
                signal: a.signal,
                scale_up: a.scale_up,
                scale_down: a.scale_down,
                cold_start_s: a.cold_start_s,
                totals: r.totals,
            })
        })
        .collect();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut policies = results?;
    policies.sort_by(|a, b| a.totals.cost_usd.total_cmp(&b.totals.cost_usd));
    let meets = |p: &&Policy| p.totals.attainment >= args.target && !p.totals.truncated;
    if args.format == Format::Json {
        return Ok(serde_json::to_string_pretty(&policies).expect("policies serialize") + "\n");
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} policies, sorted by cost; * meets the SLO for {:.0}% of requests",
        policies.len(),
        args.target * 100.0
    );
    for p in &policies {
        let mark = if meets(&p) { '*' } else { ' ' };
        let t = &p.totals;
        let _ = writeln!(
            s,
            "{mark} {:<18} {:<13} up {:<5} down {:<6} cold {:>4} s  attainment {:>5.1}%  GPU-h {:>6.2}  ${:.4}/1k good",
            format!("{:?}", p.router),
            format!("{:?}", p.signal),
            p.scale_up,
            p.scale_down,
            p.cold_start_s,
            t.attainment * 100.0,
            t.gpu_hours,
            t.cost_per_1k_good_usd
        );
    }
    match policies.iter().find(meets) {
        Some(p) => {
            let _ = writeln!(
                s,
                "cheapest meeting the SLO: {:?} routing, scale on {:?} above {} (down below {}), cold start {} s: {:.2} GPU-hours, ${:.4} per 1,000 good requests",
                p.router,
                p.signal,
                p.scale_up,
                p.scale_down,
                p.cold_start_s,
                p.totals.gpu_hours,
                p.totals.cost_per_1k_good_usd
            );
        }
        None => {
            let _ = writeln!(s, "no policy met the SLO; raise autoscaler.max_replicas or lower the traffic");
        }
    }
    Ok(s)
}

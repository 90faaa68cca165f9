//! `kneelab sweep CONFIG`: the config at every offered load of a grid, with the knee, the
//! saturation point and DistServe's goodput; as JSON or CSV.

use std::fmt::Write as _;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kneelab_sim::sweep::{self, DEFAULT_ATTAINMENT_TARGET, SweepOptions};
use kneelab_sim::{Config, Sweep};
use rayon::prelude::*;

use crate::error::{CliError, warn};
use crate::input;

/// The default load grid, as a fraction of capacity: well below the knee to past saturation.
pub use kneelab_sim::sweep::DEFAULT_LOADS;

const AFTER_HELP: &str = "\
Examples:
  kneelab sweep examples/rag.json                          the whole Sweep as JSON
  kneelab sweep examples/rag.json --format csv > rag.csv   one row per load point
  kneelab sweep examples/chat.json --loads 0.5:1.0:0.1 --target 0.99
  kneelab sweep examples/closed-loop.json --format csv     closed loop: the users scale with the load

Offered load is a fraction of the replica's capacity (its saturation throughput, measured first).
An open-loop config sweeps the arrival rate; a closed-loop config sweeps the number of users,
keeping its think time. Every point uses the same seed, so the curves are smooth.
The knee is the highest load (walking up from the lowest) whose SLO attainment is at least
--target; size a fleet by the knee's throughput, not by capacity (see `kneelab size --config`).
CSV columns: offered_load, offered_rps, throughput_rps, goodput_rps, slo_attainment, ttft_p50_s,
ttft_p99_s, tpot_p50_s, tpot_p99_s, itl_p99_s, e2e_p50_s, e2e_p99_s, num_requests_running_mean,
num_requests_waiting_mean, num_preemptions; then capacity, knee and saturation as # comments.
A progress bar is drawn on stderr when stderr is a terminal.";

/// Output format of `kneelab sweep`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The whole Sweep as pretty JSON: points with full summaries, knee, saturation.
    Json,
    /// One row per load point, then the capacity, knee and saturation as `#` comments.
    Csv,
}

/// Run a config over a grid of offered loads; print the curves and the knee.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct SweepArgs {
    /// The config: a JSON file, or - to read it from stdin. Its load mode is kept.
    #[arg(value_name = "CONFIG")]
    config: PathBuf,
    /// Offered loads FROM:TO:STEP, as fractions of capacity (0 < FROM <= TO <= 10).
    #[arg(long, value_name = "FROM:TO:STEP", default_value = DEFAULT_LOADS)]
    loads: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// SLO attainment that defines the knee (DistServe uses 0.9).
    #[arg(long, value_name = "FRACTION", default_value_t = DEFAULT_ATTAINMENT_TARGET, allow_negative_numbers = true)]
    target: f64,
    /// Seed of every random stream, overriding the config's `seed`.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
}

/// Runs the sweep and returns it as JSON or CSV text.
pub fn run(args: &SweepArgs) -> Result<String, CliError> {
    let loads = parse_loads(&args.loads)?;
    check_target(args.target)?;
    let mut loaded = input::load(&args.config)?;
    if let Some(seed) = args.seed {
        loaded.config.seed = seed;
    }
    let result = sweep_config(&loaded.config, &loaded.source, &loads, args.target)?;
    match args.format {
        Format::Json => serde_json::to_string_pretty(&result)
            .map(|j| j + "\n")
            .map_err(|e| CliError::input(format!("cannot print the sweep as JSON: {e}"))),
        Format::Csv => Ok(csv(&result)),
    }
}

/// Parses `FROM:TO:STEP` into the load grid (the core checks the numbers).
pub fn parse_loads(text: &str) -> Result<Vec<f64>, CliError> {
    let numbers: Option<Vec<f64>> = text.split(':').map(|s| s.trim().parse().ok()).collect();
    let Some(&[from, to, step]) = numbers.as_deref() else {
        return Err(CliError::input(format!(
            "--loads: want three numbers FROM:TO:STEP, such as {DEFAULT_LOADS}, got \"{text}\""
        )));
    };
    sweep::load_grid(from, to, step).map_err(|e| CliError::flag(&e))
}

/// The knee's attainment target, checked by the core before any simulation runs (the core
/// names it `attainment_target`; the user typed `--target`).
pub fn check_target(target: f64) -> Result<(), CliError> {
    sweep::check_target(target).map_err(|e| CliError::input(format!("--target: {}", e.message)))
}

/// Sweeps `config` over `loads`, its load points at once on every core (each is a whole run
/// with its own random streams, so the sweep is the same as one point after another), with a
/// progress bar on a terminal and a warning if any point was truncated.
pub fn sweep_config(config: &Config, source: &str, loads: &[f64], target: f64) -> Result<Sweep, CliError> {
    let bar = progress_bar(loads.len());
    let options = SweepOptions { attainment_target: target };
    let done = AtomicU64::new(0);
    let result = sweep::sweep_by(config, loads, options, |run| {
        if let Some(bar) = &bar {
            bar.set_message("simulating");
        }
        (0..run.loads().len())
            .into_par_iter()
            .map(|i| {
                let outcome = run.point(i);
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(bar) = &bar {
                    bar.set_position(finished);
                }
                outcome
            })
            .collect()
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let result = result.map_err(|e| CliError::config(source, &e))?;
    let truncated: Vec<String> =
        result.points.iter().filter(|p| p.summary.truncated).map(|p| p.offered_load.to_string()).collect();
    if !truncated.is_empty() {
        warn(&format!(
            "{source}: {} of {} load points hit one of the engine's work caps and stopped early (truncated: true) at \
             offered load {}; their statistics cover only the requests that completed",
            truncated.len(),
            result.points.len(),
            truncated.join(", ")
        ));
    }
    Ok(result)
}

/// Load points done / total on stderr, only for a person watching a terminal.
fn progress_bar(total: usize) -> Option<ProgressBar> {
    if !io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{msg:>18} [{bar:30}] {pos}/{len} load points, {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    // The capacity is measured before the first load point: say so rather than sit at 0.
    bar.set_message("measuring capacity");
    bar.tick();
    Some(bar)
}

/// The CSV columns, in order.
pub const CSV_HEADER: &str = "offered_load,offered_rps,throughput_rps,goodput_rps,slo_attainment,ttft_p50_s,\
ttft_p99_s,tpot_p50_s,tpot_p99_s,itl_p99_s,e2e_p50_s,e2e_p99_s,num_requests_running_mean,\
num_requests_waiting_mean,num_preemptions";

/// One header row, one row per point, then `#` comment lines (so pandas' `comment="#"` and
/// most spreadsheet imports still load it).
fn csv(result: &Sweep) -> String {
    let mut out = String::new();
    out.push_str(CSV_HEADER);
    out.push('\n');
    for p in &result.points {
        let s = &p.summary;
        let row: [&dyn std::fmt::Display; 15] = [
            &p.offered_load,
            &p.offered_rps,
            &s.throughput_rps,
            &s.goodput_rps,
            &s.slo_attainment,
            &s.ttft_s.p50,
            &s.ttft_s.p99,
            &s.tpot_s.p50,
            &s.tpot_s.p99,
            &s.itl_s.p99,
            &s.e2e_s.p50,
            &s.e2e_s.p99,
            &s.num_requests_running_mean,
            &s.num_requests_waiting_mean,
            &s.num_preemptions,
        ];
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "# capacity_rps={} base_latency_s={} attainment_target={}",
        result.capacity_rps, result.base_latency_s, result.attainment_target
    );
    let _ = match &result.knee {
        Some(k) => writeln!(
            out,
            "# knee offered_load={} offered_rps={} throughput_rps={} goodput_rps={} slo_attainment={}",
            k.offered_load, k.offered_rps, k.throughput_rps, k.goodput_rps, k.slo_attainment
        ),
        None => writeln!(
            out,
            "# knee none: the lowest load point's SLO attainment is already below {}",
            result.attainment_target
        ),
    };
    let _ = match &result.saturation {
        Some(s) => writeln!(out, "# saturation offered_load={} throughput_rps={}", s.offered_load, s.throughput_rps),
        None => writeln!(out, "# saturation none: no load point completed a request"),
    };
    if let Some(g) = result.distserve_goodput_rps {
        let _ = writeln!(out, "# distserve_goodput_rps={g}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_grids() {
        // (--loads, Ok(points) | Err(phrase))
        let rows: &[(&str, Result<&[f64], &str>)] = &[
            ("0.5:1.0:0.25", Ok(&[0.5, 0.75, 1.0])),
            ("0.1:0.3:0.1", Ok(&[0.1, 0.2, 0.3])),
            ("0.9:0.9:1", Ok(&[0.9])),
            (" 0.5 : 1 : 0.5 ", Ok(&[0.5, 1.0])),
            ("1:0.5:0.1", Err("FROM <= TO")),
            ("0.1:1:0", Err("STEP > 0")),
            ("0:1:0.1", Err("0.001 <= FROM")),
            ("1e-300:1:0.1", Err("0.001 <= FROM")),
            ("0.1:11:1", Err("TO <= 10")),
            ("0.1:1:-0.1", Err("STEP > 0")),
            ("a:b:c", Err("three numbers")),
            ("0.1:1", Err("three numbers")),
            ("0.1:1:0.1:2", Err("three numbers")),
            ("0.1:x:1:0.5", Err("three numbers")),
            ("", Err("three numbers")),
            ("0.001:10:0.001", Err("at most 1000")),
        ];
        for (text, want) in rows {
            match (parse_loads(text), want) {
                (Ok(got), Ok(want)) => assert_eq!(&got[..], *want, "{text}"),
                (Err(e), Err(phrase)) => {
                    let msg = e.to_string();
                    assert!(msg.starts_with("--loads: ") && msg.contains(phrase), "{text}: {msg}");
                }
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn targets() {
        for ok in [0.5, 0.9, 1.0] {
            assert!(check_target(ok).is_ok(), "{ok}");
        }
        for bad in [0.0, -0.1, 1.01, f64::NAN, f64::INFINITY] {
            assert!(check_target(bad).unwrap_err().to_string().starts_with("--target: "), "{bad}");
        }
    }

    #[test]
    fn csv_has_a_column_per_header_name() {
        let config =
            Config { run: kneelab_sim::RunConfig { requests: 500, warmup_requests: Some(50) }, ..Config::default() };
        let result = sweep::sweep(&config, &[0.5, 1.0], SweepOptions::default()).unwrap();
        let text = csv(&result);
        let columns = CSV_HEADER.split(',').count();
        let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(rows.len(), 3);
        for row in &rows[1..] {
            assert_eq!(row.split(',').count(), columns, "{row}");
            assert!(row.split(',').all(|c| c.parse::<f64>().is_ok()), "{row}");
        }
        assert!(text.lines().any(|l| l.starts_with("# knee")));
    }
}

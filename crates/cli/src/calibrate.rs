//! `kneelab calibrate`: the replica held against published measurements (Vidur's A100 operator
//! profile, an H100 estimate from it, vLLM V1's latency against QPS on one H100), one row per
//! figure with our number and the ratio. The figures and setups live in
//! `kneelab_sim::calibration`.

use std::fmt::Write as _;

use clap::{Args, ValueEnum};
use kneelab_sim::calibration::{self, Row};

use crate::error::CliError;

/// Output format of `kneelab calibrate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table.
    Text,
    /// The rows as JSON.
    Json,
}

/// Hold the replica against published vLLM measurements: each figure, ours, and the ratio.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Requests per simulated run of the vLLM V1 figure (more is steadier, and slower).
    #[arg(long, value_name = "N", default_value_t = 4000,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(kneelab_sim::scenario::MAX_REQUESTS)))]
    requests: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Runs `kneelab calibrate`.
pub fn run(args: &CalibrateArgs) -> Result<String, CliError> {
    let rows = calibration::report(args.requests).map_err(|e| CliError::flag(&e))?;
    match args.format {
        Format::Text => Ok(text(&rows)),
        Format::Json => serde_json::to_string_pretty(&rows)
            .map(|j| j + "\n")
            .map_err(|e| CliError::input(format!("cannot print the calibration as JSON: {e}"))),
    }
}

fn text(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:<34} {:>13} {:>13} {:>7}  {:<9} source", "figure", "published", "ours", "ratio", "holds");
    let mut last_source = "";
    for r in rows {
        let holds = match r.tolerance {
            Some(t) => format!("{} ±{:.0}%", if r.holds() { "yes" } else { "NO" }, t * 100.0),
            None => "shown".to_string(),
        };
        let source = if r.source == last_source { "〃" } else { r.source };
        last_source = r.source;
        let _ = writeln!(
            out,
            "{:<34} {:>7.2} {:<5} {:>7.2} {:<5} {:>7.3}  {:<9} {}",
            r.figure, r.published, r.unit, r.ours, r.unit, r.ratio, holds, source
        );
    }
    let held = rows.iter().filter(|r| r.tolerance.is_some());
    let (n, ok) = (held.clone().count(), held.filter(|r| r.holds()).count());
    let _ =
        writeln!(out, "{ok} of {n} held figures within tolerance; the V1 runs use the setup in calibration::v1_setup.");
    out
}

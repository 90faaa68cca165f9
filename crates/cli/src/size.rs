//! `kneelab size`: how many replicas a peak needs, by Little's Law on the batch, from numbers
//! given by hand or from a sweep of a config (the knee's throughput beside the saturation figure
//! and the replica's limits).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};
use kneelab_sim::sweep::DEFAULT_ATTAINMENT_TARGET;
use kneelab_sim::{ConfigError, Knee, LimitKind, Limits, Saturation, SizeInput, Sizing};
use serde::Serialize;

use crate::error::CliError;
use crate::input;
use crate::sweep::{DEFAULT_LOADS, check_target, parse_loads, sweep_config};

const AFTER_HELP: &str = "\
Examples:
  kneelab size --max-num-seqs 64 --batch-s 8 --peak-qps 100
      sequence-cap ceiling = 64 / 8 s = 8.00 per replica; replicas = ceil(100 / 8.00) = 13
  kneelab size --max-num-seqs 64 --batch-s 8 --peak-qps 100 --knee-qps 6
      the knee holds 6 QPS per replica, so provision ceil(100 / 6.00) = 17, not 13
  kneelab size --config examples/rag.json --peak-qps 40
      sweeps the config: knee throughput vs saturation throughput, and both replica counts
  kneelab size --config examples/rag.json --peak-qps 40 --format json

Little's Law holds for each part of a replica with that part's own time: running requests =
throughput x time in the batch (first scheduled to last token, vllm:num_requests_running), and
running + waiting = throughput x end-to-end latency. The batch holds at most max_num_seqs, so the
sequence cap allows at most max_num_seqs / time in the batch requests per second. That is one
ceiling of several (the prefill token rate and the KV cache are others; prefill-heavy traffic
hits prefill first), and near any ceiling queues grow and latency SLOs fail: provision by the
per-replica throughput at the knee, which a sweep measures. Give either --max-num-seqs and
--batch-s, or --config.";

/// Output format of `kneelab size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A few lines that show the arithmetic.
    Text,
    /// The sizing as JSON (with the sweep's knee and saturation under `--config`).
    Json,
}

/// Size a fleet by Little's Law, by hand or from a sweep of a config.
#[derive(Debug, Args)]
#[command(
    after_help = AFTER_HELP,
    group(ArgGroup::new("by_hand").args(["max_num_seqs", "batch_s", "knee_qps", "saturation_qps"]).multiple(true)),
    group(ArgGroup::new("from_config").args(["config", "loads", "target"]).multiple(true).conflicts_with("by_hand")),
)]
pub struct SizeArgs {
    /// Concurrency cap per replica (vLLM's --max-num-seqs).
    #[arg(long, value_name = "N", required_unless_present = "config", allow_negative_numbers = true)]
    max_num_seqs: Option<f64>,
    /// Mean time in the batch of a request with the batch full (first scheduled to last token,
    /// not end to end: the queue is outside the batch), in seconds.
    #[arg(long, value_name = "S", required_unless_present = "config", allow_negative_numbers = true)]
    batch_s: Option<f64>,
    /// Peak load the fleet must serve, in requests per second.
    #[arg(long, value_name = "Q", allow_negative_numbers = true)]
    peak_qps: f64,
    /// Measured per-replica throughput at the knee (from a sweep), in requests per second.
    #[arg(long, value_name = "Q", allow_negative_numbers = true)]
    knee_qps: Option<f64>,
    /// Measured per-replica throughput at saturation, in requests per second.
    #[arg(long, value_name = "Q", allow_negative_numbers = true)]
    saturation_qps: Option<f64>,
    /// Sweep this config (a JSON file, or - for stdin) for the knee and saturation throughput.
    #[arg(long, value_name = "CONFIG")]
    config: Option<PathBuf>,
    /// With --config: offered loads FROM:TO:STEP of the sweep.
    #[arg(long, value_name = "FROM:TO:STEP", requires = "config")]
    loads: Option<String>,
    /// With --config: SLO attainment that defines the knee [default: 0.9].
    #[arg(long, value_name = "FRACTION", requires = "config", allow_negative_numbers = true)]
    target: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// What `size` prints as JSON: the core's [`Sizing`], the count to provision, and under
/// `--config` the sweep it came from.
#[derive(Debug, Serialize)]
struct Report {
    #[serde(flatten)]
    sizing: Sizing,
    /// The count to provision: at the knee when known.
    provision_replicas: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep: Option<Basis>,
}

/// The sweep a `--config` sizing was read from.
#[derive(Debug, Serialize)]
struct Basis {
    config: String,
    capacity_rps: f64,
    attainment_target: f64,
    load_points: usize,
    knee: Knee,
    knee_e2e_mean_s: f64,
    knee_running_mean: f64,
    saturation: Saturation,
    /// Mean time in the batch at the saturation point, where the batch is fullest.
    saturation_batch_s: f64,
    saturation_running_mean: f64,
    limits: Limits,
}

/// Sizes the fleet and returns the text or JSON to print.
pub fn run(args: &SizeArgs) -> Result<String, CliError> {
    let report = match &args.config {
        Some(path) => from_config(args, path)?,
        None => by_hand(args)?,
    };
    match args.format {
        Format::Text => Ok(text(&report)),
        Format::Json => serde_json::to_string_pretty(&report)
            .map(|j| j + "\n")
            .map_err(|e| CliError::input(format!("cannot print the sizing as JSON: {e}"))),
    }
}

fn by_hand(args: &SizeArgs) -> Result<Report, CliError> {
    // clap requires both without --config; NaN lets the core reject a missing one by name anyway.
    let sizing = kneelab_sim::size(&SizeInput {
        max_num_seqs: args.max_num_seqs.unwrap_or(f64::NAN),
        batch_s: args.batch_s.unwrap_or(f64::NAN),
        peak_qps: args.peak_qps,
        knee_qps: args.knee_qps,
        saturation_qps: args.saturation_qps,
    })
    .map_err(|e| CliError::flag(&e))?;
    Ok(Report { provision_replicas: provision(&sizing), sizing, sweep: None })
}

fn from_config(args: &SizeArgs, path: &std::path::Path) -> Result<Report, CliError> {
    // Check the cheap inputs before the sweep, not after it.
    let check =
        SizeInput { max_num_seqs: 1.0, batch_s: 1.0, peak_qps: args.peak_qps, knee_qps: None, saturation_qps: None };
    kneelab_sim::size(&check).map_err(|e| CliError::flag(&e))?;
    let loads = parse_loads(args.loads.as_deref().unwrap_or(DEFAULT_LOADS))?;
    let target = args.target.unwrap_or(DEFAULT_ATTAINMENT_TARGET);
    check_target(target)?;
    let loaded = input::load(path)?;
    let source = loaded.source;
    let result = sweep_config(&loaded.config, &source, &loads, target)?;

    let Some(knee) = result.knee else {
        let first = result.points.iter().min_by(|a, b| a.offered_load.total_cmp(&b.offered_load));
        let (load, attainment) = first.map_or((0.0, 0.0), |p| (p.offered_load, p.summary.slo_attainment));
        return Err(CliError::input(format!(
            "{source}: no knee: even the lowest load point ({load}) has SLO attainment {attainment:.3}, below the \
             target {target}; loosen slo.ttft_ms / slo.tpot_ms, lower --target, or start --loads lower"
        )));
    };
    let Some(saturation) = result.saturation else {
        return Err(CliError::input(format!("{source}: no load point completed a request; nothing to size by")));
    };
    let at = |load: f64| result.points.iter().find(|p| p.offered_load == load).map(|p| &p.summary);
    let (knee_e2e_mean_s, knee_running_mean) =
        at(knee.offered_load).map_or((f64::NAN, f64::NAN), |s| (s.e2e_s.mean, s.num_requests_running_mean));
    let saturation_running_mean = at(saturation.offered_load).map_or(f64::NAN, |s| s.num_requests_running_mean);
    let basis = result
        .sizing
        .ok_or_else(|| CliError::input(format!("{source}: the sweep has no saturation point to size by")))?;
    let sizing = kneelab_sim::size(&basis.input(f64::from(loaded.config.engine.max_num_seqs), args.peak_qps))
        .map_err(|e: ConfigError| CliError::input(format!("{source}: cannot size from this sweep: {e}")))?;
    Ok(Report {
        provision_replicas: provision(&sizing),
        sizing,
        sweep: Some(Basis {
            config: source,
            capacity_rps: result.capacity_rps,
            attainment_target: result.attainment_target,
            load_points: result.points.len(),
            knee,
            knee_e2e_mean_s,
            knee_running_mean,
            saturation,
            saturation_batch_s: sizing.batch_s,
            saturation_running_mean,
            limits: result.limits,
        }),
    })
}

/// The knee's count when known; without it, the larger of the two ceilings (both optimistic).
fn provision(s: &Sizing) -> u64 {
    s.replicas_at_knee.unwrap_or_else(|| s.replicas.max(s.replicas_at_saturation.unwrap_or(0)))
}

/// How the text names a limit.
fn limit_name(kind: LimitKind) -> &'static str {
    match kind {
        LimitKind::SeqCap => "the sequence cap",
        LimitKind::KvCache => "the KV cache",
        LimitKind::Prefill => "prefill",
    }
}

/// A number as the user typed it (64, 8, 0.5), not padded with decimals.
fn plain(x: f64) -> String {
    format!("{x}")
}

fn text(report: &Report) -> String {
    let s = &report.sizing;
    let mut out = String::new();
    // Writing to a String cannot fail.
    let mut line = |text: String| {
        let _ = writeln!(out, "{text}");
    };
    let peak = plain(s.peak_qps);
    if let Some(b) = &report.sweep {
        line(format!(
            "sweep of {}: {} load points, capacity {:.2} req/s, knee = highest load with SLO attainment >= {}",
            b.config, b.load_points, b.capacity_rps, b.attainment_target
        ));
        line(format!(
            "knee: offered load {}, throughput {:.2} req/s, SLO attainment {:.3}, mean E2E {:.2} s",
            b.knee.offered_load, b.knee.throughput_rps, b.knee.slo_attainment, b.knee_e2e_mean_s
        ));
        line(format!(
            "saturation: throughput {:.2} req/s, reached at offered load {}",
            b.saturation.throughput_rps, b.saturation.offered_load
        ));
        line(format!(
            "Little's Law on the batch at saturation: {:.2} req/s x {:.2} s in the batch = {:.1} running, of \
             max_num_seqs {}",
            b.saturation.throughput_rps,
            s.batch_s,
            b.saturation_running_mean,
            plain(s.max_num_seqs)
        ));
        line(format!(
            "sequence-cap ceiling = {} / {:.2} s = {:.2} req/s; replicas = ceil({peak} / {:.2}) = {}",
            plain(s.max_num_seqs),
            s.batch_s,
            s.per_replica_max_qps,
            s.per_replica_max_qps,
            s.replicas
        ));
        let l = &b.limits;
        line(format!(
            "limits (estimated): sequence cap {:.2}, KV cache {:.2}, prefill {:.2} req/s ({:.0} prefill tokens/s); \
             {} binds",
            l.seq_cap.rps,
            l.kv_cache.rps,
            l.prefill.rps,
            l.prefill.prefill_tokens_per_s,
            limit_name(l.binding)
        ));
    } else {
        line(
            "Little's Law on the batch: running = throughput x time in the batch, so the sequence cap allows at \
             most max_num_seqs / time in the batch (one limit of several)."
                .to_string(),
        );
        line(format!(
            "sequence-cap ceiling = {} / {} s = {:.2} per replica",
            plain(s.max_num_seqs),
            plain(s.batch_s),
            s.per_replica_max_qps
        ));
        line(format!("replicas = ceil({peak} / {:.2}) = {}", s.per_replica_max_qps, s.replicas));
    }
    if let (Some(q), Some(n)) = (s.saturation_qps, s.replicas_at_saturation) {
        line(format!(
            "replicas at saturation = ceil({peak} / {q:.2}) = {n}   (naive: enough throughput, latency SLOs missed)"
        ));
    }
    if let (Some(q), Some(n)) = (s.knee_qps, s.replicas_at_knee) {
        line(format!("replicas at the knee = ceil({peak} / {q:.2}) = {n}   (holds the SLOs)"));
        let naive = s.replicas_at_saturation.unwrap_or(s.replicas);
        if n > naive {
            line(format!(
                "provision {n} replicas, not {naive}: past the knee the throughput still rises but queues grow \
                 and latency SLOs fail."
            ));
        } else {
            line(format!("provision {n} replicas."));
        }
    } else {
        line(format!(
            "provision at least {} replicas; that is a ceiling-based lower bound: give --knee-qps from a sweep \
             (or use --config) for the count that holds the SLOs.",
            report.provision_replicas
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(knee: Option<f64>, saturation: Option<f64>) -> Report {
        let input =
            SizeInput { max_num_seqs: 64.0, batch_s: 8.0, peak_qps: 100.0, knee_qps: knee, saturation_qps: saturation };
        let sizing = kneelab_sim::size(&input).unwrap();
        Report { provision_replicas: provision(&sizing), sizing, sweep: None }
    }

    #[test]
    fn text_shows_the_arithmetic() {
        // (knee_qps, saturation_qps, lines that must appear)
        let rows: &[(Option<f64>, Option<f64>, &[&str])] = &[
            (
                None,
                None,
                &[
                    "sequence-cap ceiling = 64 / 8 s = 8.00 per replica",
                    "replicas = ceil(100 / 8.00) = 13",
                    "at least 13",
                ],
            ),
            (Some(6.0), None, &["replicas at the knee = ceil(100 / 6.00) = 17", "provision 17 replicas, not 13"]),
            (
                Some(6.0),
                Some(7.5),
                &["replicas at saturation = ceil(100 / 7.50) = 14", "provision 17 replicas, not 14"],
            ),
            (None, Some(7.5), &["provision at least 14 replicas"]),
        ];
        for (knee, saturation, want) in rows {
            let out = text(&report(*knee, *saturation));
            for phrase in *want {
                assert!(out.contains(phrase), "{knee:?} {saturation:?}: missing {phrase:?} in\n{out}");
            }
        }
    }

    #[test]
    fn provision_prefers_the_knee() {
        assert_eq!(report(Some(6.0), Some(8.0)).provision_replicas, 17);
        assert_eq!(report(None, Some(7.5)).provision_replicas, 14);
        assert_eq!(report(None, None).provision_replicas, 13);
    }
}

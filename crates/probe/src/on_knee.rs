//! A measured window set against a simulated sweep of the same replica: where its request rate
//! sits on the knee, which limit binds, and how many replicas a peak needs. The CLI's
//! `probe --config` and the page's "paste your scrapes" both answer with this.

use kneelab_sim::{LimitKind, Limits, SizeInput, Sizing, Sweep, size};
use serde::Serialize;

use crate::placement::{CurvePoint, Placement, place};
use crate::window::Report;

/// A window placed on a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OnKnee {
    /// The measured request rate of one engine: vLLM's data-parallel engines are replicas of
    /// their own, each with the sweep's knee.
    pub rate_per_engine_rps: f64,
    /// Where that rate falls on the sweep's throughput curve.
    pub placement: Placement,
    /// The knee's throughput, when the sweep has one.
    pub knee_rps: Option<f64>,
    /// The knee's offered load.
    pub knee_offered_load: Option<f64>,
    /// The highest throughput the sweep reached.
    pub saturation_rps: f64,
    /// The replica's estimated limits; `limits.binding` is the one that binds.
    pub limits: Limits,
    /// The binding limit, in words.
    pub binding: &'static str,
    /// Replicas for the peak, when one was given and the sweep can size.
    pub sizing: Option<Sizing>,
}

/// How a limit is named to a reader.
pub fn limit_words(kind: LimitKind) -> &'static str {
    match kind {
        LimitKind::SeqCap => "the sequence cap (--max-num-seqs)",
        LimitKind::KvCache => "the KV cache",
        LimitKind::Prefill => "prefill",
    }
}

/// Places `report`'s request rate on `sweep` (of a replica with `max_num_seqs` seats) and sizes a
/// fleet for `peak_qps`. `None` without a measured rate or a usable sweep.
pub fn on_knee(report: &Report, sweep: &Sweep, max_num_seqs: u32, peak_qps: Option<f64>) -> Option<OnKnee> {
    let engines = report.engines.max(1) as f64;
    let rate_per_engine_rps = report.request_rate_rps? / engines;
    let curve: Vec<CurvePoint> = sweep
        .points
        .iter()
        .map(|p| CurvePoint { offered_load: p.offered_load, throughput_rps: p.summary.throughput_rps })
        .collect();
    let knee_rps = sweep.knee.map(|k| k.throughput_rps);
    let placement = place(rate_per_engine_rps, &curve, knee_rps)?;
    let saturation_rps = curve.iter().map(|p| p.throughput_rps).fold(0.0, f64::max);
    let sizing = match (peak_qps, sweep.sizing) {
        (Some(peak_qps), Some(basis)) => size(&basis.input(f64::from(max_num_seqs), peak_qps)).ok(),
        _ => None,
    };
    Some(OnKnee {
        rate_per_engine_rps,
        placement,
        knee_rps,
        knee_offered_load: sweep.knee.map(|k| k.offered_load),
        saturation_rps,
        limits: sweep.limits,
        binding: limit_words(sweep.limits.binding),
        sizing,
    })
}

/// Checks a peak the way the sizing will, before any sweep runs: the error names `peak_qps`.
pub fn check_peak(peak_qps: f64) -> Result<(), kneelab_sim::ConfigError> {
    size(&SizeInput { max_num_seqs: 1.0, batch_s: 1.0, peak_qps, knee_qps: None, saturation_qps: None }).map(|_| ())
}

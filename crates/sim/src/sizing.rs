//! Little's Law sizing, applied to the part the cap bounds: `num_requests_running` = throughput x
//! time in the batch, so `--max-num-seqs` allows at most cap / time in the batch (one limit
//! among several, see [`crate::limits`]); a fleet needs peak QPS / per-replica QPS replicas,
//! with the per-replica QPS taken at the knee rather than at saturation.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// What a sweep gives a sizing: the time in the batch at its saturation point (where the batch
/// is fullest, so the cap's Little's Law applies), and the throughput at its knee and at
/// saturation. The one rule for sizing from a sweep: the CLI's `size --config`, the page's
/// calculator, Step 5 and the worked fleet all take these.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizingBasis {
    /// Mean time in the batch at the saturation point.
    pub batch_s: f64,
    /// Throughput at the knee, if the sweep has one.
    pub knee_qps: Option<f64>,
    /// Throughput at saturation.
    pub saturation_qps: f64,
}

impl SizingBasis {
    /// The sizing input for a replica of `max_num_seqs` seats and a peak of `peak_qps`.
    pub fn input(&self, max_num_seqs: f64, peak_qps: f64) -> SizeInput {
        SizeInput {
            max_num_seqs,
            batch_s: self.batch_s,
            peak_qps,
            knee_qps: self.knee_qps,
            saturation_qps: Some(self.saturation_qps),
        }
    }
}

/// A fleet sized by Little's Law.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sizing {
    /// Concurrency cap per replica (`--max-num-seqs`).
    pub max_num_seqs: f64,
    /// Mean time in the batch (first scheduled to last token) with the batch full: the W that
    /// goes with the running requests the cap bounds. Not the E2E latency, which adds the queue.
    pub batch_s: f64,
    /// The peak to serve.
    pub peak_qps: f64,
    /// Little's Law on the batch: `max_num_seqs / batch_s`.
    pub per_replica_max_qps: f64,
    /// `ceil(peak_qps / per_replica_max_qps)`.
    pub replicas: u64,
    /// Per-replica QPS at the knee, when known.
    pub knee_qps: Option<f64>,
    /// `ceil(peak_qps / knee_qps)`: what to provision.
    pub replicas_at_knee: Option<u64>,
    /// Per-replica QPS at saturation, when known.
    pub saturation_qps: Option<f64>,
    /// `ceil(peak_qps / saturation_qps)`: the naive count, too few to hold the SLOs.
    pub replicas_at_saturation: Option<u64>,
}

/// What a fleet is sized from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeInput {
    /// Concurrency cap per replica (`--max-num-seqs`).
    pub max_num_seqs: f64,
    /// Mean time in the batch with the batch full, first scheduled to last token.
    pub batch_s: f64,
    /// The peak to serve.
    pub peak_qps: f64,
    /// Per-replica QPS at the knee, from a sweep.
    #[serde(default)]
    pub knee_qps: Option<f64>,
    /// Per-replica QPS at saturation, from a sweep.
    #[serde(default)]
    pub saturation_qps: Option<f64>,
}

/// Sizes a fleet; `knee_qps` and `saturation_qps` come from a sweep when available.
pub fn size(input: &SizeInput) -> Result<Sizing, ConfigError> {
    let SizeInput { max_num_seqs, batch_s, peak_qps, knee_qps, saturation_qps } = *input;
    let check = |name: &str, v: f64, at_least_one: bool| {
        let ok = v.is_finite() && v <= 1e12 && if at_least_one { v >= 1.0 } else { v > 0.0 };
        if ok {
            Ok(())
        } else {
            let rule = if at_least_one { "at least 1" } else { "above 0" };
            Err(ConfigError::new(name, format!("must be a number {rule}, got {v}")))
        }
    };
    check("max_num_seqs", max_num_seqs, true)?;
    // The cap is `--max-num-seqs`: a whole number of sequences, in the config's own range.
    let cap_max = f64::from(crate::scenario::MAX_NUM_SEQS);
    if max_num_seqs.fract() != 0.0 || max_num_seqs > cap_max {
        return Err(ConfigError::new(
            "max_num_seqs",
            format!("must be a whole number of sequences from 1 to {cap_max}, got {max_num_seqs}"),
        ));
    }
    check("batch_s", batch_s, false)?;
    check("peak_qps", peak_qps, false)?;
    if let Some(q) = knee_qps {
        check("knee_qps", q, false)?;
    }
    if let Some(q) = saturation_qps {
        check("saturation_qps", q, false)?;
    }
    let per_replica_max_qps = max_num_seqs / batch_s;
    // Each input is in range on its own, yet their quotient can still be absurd (1e12 QPS on
    // replicas that serve 1e-12 each); say so instead of saturating a count.
    let count = |per_replica_qps: f64, of: &str| {
        let n = peak_qps / per_replica_qps;
        if n <= MAX_REPLICAS as f64 {
            Ok(replicas(peak_qps, per_replica_qps))
        } else {
            Err(ConfigError::new(
                "peak_qps",
                format!(
                    "needs {} replicas at {per_replica_qps} QPS each ({of}), more than {MAX_REPLICAS}; check the inputs",
                    scientific(n)
                ),
            ))
        }
    };
    Ok(Sizing {
        max_num_seqs,
        batch_s,
        peak_qps,
        per_replica_max_qps,
        replicas: count(per_replica_max_qps, "max_num_seqs / batch_s")?,
        knee_qps,
        replicas_at_knee: knee_qps.map(|q| count(q, "knee_qps")).transpose()?,
        saturation_qps,
        replicas_at_saturation: saturation_qps.map(|q| count(q, "saturation_qps")).transpose()?,
    })
}

/// The most replicas a sizing may ask for: far past any fleet, well inside `u64` and exactly
/// representable as `f64`, so every count is exact.
pub const MAX_REPLICAS: u64 = 1_000_000_000;

/// A positive count in scientific notation with three decimals ("1.235e12"), as `{:.3e}` writes
/// it, but by `{:.3}` and an integer: the page's wasm then carries no `{:e}` formatter (about
/// 1 KB gzipped) for this one message.
fn scientific(n: f64) -> String {
    if !n.is_finite() || n <= 0.0 {
        return format!("{n}");
    }
    let mut exp = libm::floor(libm::log10(n)) as i32;
    let mut mantissa = n / libm::pow(10.0, f64::from(exp));
    // A mantissa just under 10 (or, from the division, just over) is written with the next power.
    if mantissa >= 9.9995 {
        mantissa /= 10.0;
        exp += 1;
    } else if mantissa < 1.0 {
        mantissa *= 10.0;
        exp -= 1;
    }
    format!("{mantissa:.3}e{exp}")
}

/// `ceil(peak / per_replica)`, forgiving the last bit of floating-point noise (64 / 8 is 8).
pub fn replicas(peak_qps: f64, per_replica_qps: f64) -> u64 {
    let exact = peak_qps / per_replica_qps;
    let rounded = exact.round();
    if (exact - rounded).abs() <= 1e-9 * exact.max(1.0) { rounded as u64 } else { exact.ceil() as u64 }.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(
        max_num_seqs: f64,
        batch_s: f64,
        peak_qps: f64,
        knee_qps: Option<f64>,
        saturation_qps: Option<f64>,
    ) -> Result<Sizing, ConfigError> {
        super::size(&SizeInput { max_num_seqs, batch_s, peak_qps, knee_qps, saturation_qps })
    }

    #[test]
    fn the_lessons_example() {
        let s = size(64.0, 8.0, 100.0, None, None).unwrap();
        assert_eq!((s.per_replica_max_qps, s.replicas), (8.0, 13));
    }

    #[test]
    fn knee_needs_more_replicas_than_saturation() {
        let s = size(64.0, 8.0, 100.0, Some(6.0), Some(8.0)).unwrap();
        assert_eq!((s.replicas_at_knee, s.replicas_at_saturation), (Some(17), Some(13)));
    }

    #[test]
    fn exact_multiples_do_not_round_up() {
        assert_eq!(replicas(64.0, 8.0), 8);
        assert_eq!(replicas(0.3, 0.1), 3);
    }

    #[test]
    fn bad_inputs_name_the_field() {
        assert_eq!(size(0.0, 8.0, 1.0, None, None).unwrap_err().path, "max_num_seqs");
        assert_eq!(size(8.0, f64::NAN, 1.0, None, None).unwrap_err().path, "batch_s");
        assert_eq!(size(8.0, 1.0, -1.0, None, None).unwrap_err().path, "peak_qps");
        // The cap is a whole number of sequences in the config's range.
        for cap in [2.5, 16385.0, 1e9] {
            let e = size(cap, 8.0, 1.0, None, None).unwrap_err();
            assert_eq!(e.path, "max_num_seqs", "{cap}");
            assert!(e.message.contains("whole number of sequences from 1 to 16384"), "{e}");
        }
        assert_eq!(size(16384.0, 8.0, 1.0, None, None).unwrap().max_num_seqs, 16384.0);
    }

    #[test]
    fn counts_that_would_overflow_are_errors() {
        // Once 18446744073709551615 replicas (a saturating cast) or `null` (infinity) on the page.
        for (seqs, latency, peak, knee) in
            [(1.0, 1e12, 1e12, None), (16384.0, 1.0, 1e12, Some(1e-12)), (1.0, 1.0, 2e9, None)]
        {
            let e = size(seqs, latency, peak, knee, None).unwrap_err();
            assert_eq!(e.path, "peak_qps", "{seqs} {latency} {peak}");
            assert!(e.to_string().contains("more than 1000000000"), "{e}");
        }
        // The largest count allowed is exact.
        assert_eq!(size(1.0, 1.0, 1e9, None, None).unwrap().replicas, MAX_REPLICAS);
    }

    #[test]
    fn scientific_writes_what_the_e_formatter_writes() {
        for n in [1.0, 2.5e9, 1.0000001e9, 1.2345e12, 9.9996e12, 9.9994e12, 7e15, 1e24, 3.3333e30, 1.7e308] {
            assert_eq!(super::scientific(n), format!("{n:.3e}"), "{n}");
        }
        assert_eq!(super::scientific(f64::INFINITY), "inf");
    }
}

//! A measured request rate placed on a simulated replica's knee: the offered load at which the
//! simulated replica's throughput equals the measured rate, read off its sweep.

use serde::Serialize;

/// One point of a simulated sweep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurvePoint {
    /// Offered load, a fraction of capacity.
    pub offered_load: f64,
    /// Throughput achieved there, in requests per second.
    pub throughput_rps: f64,
}

/// Where a measured rate sits on the curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Placement {
    /// The measured request rate.
    pub rate_rps: f64,
    /// The offered load whose simulated throughput equals the rate, interpolated between sweep
    /// points; `None` when the rate is at or above the simulated saturation.
    pub offered_load: Option<f64>,
    /// The rate as a fraction of the knee's throughput (1 = at the knee), when there is a knee.
    pub of_knee: Option<f64>,
    /// The rate as a fraction of the simulated saturation throughput.
    pub of_saturation: f64,
    /// Where it is, in a word.
    pub zone: Zone,
}

/// Where on the curve a rate falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Zone {
    /// Below the knee's throughput: the SLOs hold, with room to grow.
    BelowKnee,
    /// Within [`AT_KNEE`] of the knee's throughput, either side: a measured window's rate is no
    /// finer than that, so it reads as the knee itself.
    AtKnee,
    /// Between the knee and saturation: throughput still rises, the SLOs are being lost.
    PastKnee,
    /// At or above the highest simulated throughput.
    Saturated,
}

/// How near the knee's throughput (relative) a rate counts as at the knee.
pub const AT_KNEE: f64 = 0.03;

/// Places `rate_rps` on `curve` (sorted by load or not). `knee_rps` is the knee's throughput.
/// Between points the load is interpolated linearly; the throughput is taken as rising to its
/// maximum, so points past the maximum are not used.
pub fn place(rate_rps: f64, curve: &[CurvePoint], knee_rps: Option<f64>) -> Option<Placement> {
    if !(rate_rps.is_finite() && rate_rps >= 0.0) || curve.is_empty() {
        return None;
    }
    let mut points: Vec<CurvePoint> = curve.to_vec();
    points.sort_by(|a, b| a.offered_load.total_cmp(&b.offered_load));
    let top = points.iter().enumerate().max_by(|a, b| a.1.throughput_rps.total_cmp(&b.1.throughput_rps))?.0;
    let rising = &points[..=top];
    let saturation = rising[top].throughput_rps;
    // From the origin (no load, no throughput) through each point up to the maximum.
    let mut offered_load = None;
    let mut prev = CurvePoint { offered_load: 0.0, throughput_rps: 0.0 };
    for &p in rising {
        if p.throughput_rps >= rate_rps && p.throughput_rps > prev.throughput_rps && rate_rps < saturation {
            let f = (rate_rps - prev.throughput_rps) / (p.throughput_rps - prev.throughput_rps);
            offered_load = Some(prev.offered_load + f.clamp(0.0, 1.0) * (p.offered_load - prev.offered_load));
            break;
        }
        prev = prev.max_throughput(p);
    }
    let zone = match knee_rps {
        _ if offered_load.is_none() => Zone::Saturated,
        Some(k) if (rate_rps / k - 1.0).abs() <= AT_KNEE => Zone::AtKnee,
        Some(k) if rate_rps <= k => Zone::BelowKnee,
        Some(_) => Zone::PastKnee,
        None => Zone::PastKnee,
    };
    Some(Placement {
        rate_rps,
        offered_load,
        of_knee: knee_rps.filter(|k| *k > 0.0).map(|k| rate_rps / k),
        of_saturation: rate_rps / saturation,
        zone,
    })
}

impl CurvePoint {
    /// The point with the higher throughput (a dip in a noisy curve is stepped over).
    fn max_throughput(self, other: CurvePoint) -> CurvePoint {
        if other.throughput_rps >= self.throughput_rps { other } else { self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(points: &[(f64, f64)]) -> Vec<CurvePoint> {
        points.iter().map(|&(offered_load, throughput_rps)| CurvePoint { offered_load, throughput_rps }).collect()
    }

    #[test]
    fn rows() {
        let c = curve(&[(0.2, 2.0), (0.4, 4.0), (0.6, 6.0), (0.8, 7.5), (1.0, 8.0), (1.2, 7.9)]);
        // (rate, knee, load, zone)
        let rows: &[(f64, Option<f64>, Option<f64>, Zone)] = &[
            (3.0, Some(6.0), Some(0.3), Zone::BelowKnee),
            (1.0, Some(6.0), Some(0.1), Zone::BelowKnee),
            (5.8, Some(6.0), Some(0.58), Zone::BelowKnee),
            (5.9, Some(6.0), Some(0.59), Zone::AtKnee),
            (6.0, Some(6.0), Some(0.6), Zone::AtKnee),
            (6.15, Some(6.0), Some(0.62), Zone::AtKnee),
            (6.75, Some(6.0), Some(0.7), Zone::PastKnee),
            (7.75, Some(6.0), Some(0.9), Zone::PastKnee),
            (8.0, Some(6.0), None, Zone::Saturated),
            (9.0, None, None, Zone::Saturated),
            (0.0, None, Some(0.0), Zone::PastKnee),
        ];
        for &(rate, knee, load, zone) in rows {
            let p = place(rate, &c, knee).unwrap();
            match (p.offered_load, load) {
                (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{rate}: {a} vs {b}"),
                (a, b) => assert_eq!(a, b, "{rate}"),
            }
            assert_eq!(p.zone, zone, "{rate}");
            assert!((p.of_saturation - rate / 8.0).abs() < 1e-12);
        }
        assert_eq!(place(3.0, &c, Some(6.0)).unwrap().of_knee, Some(0.5));
    }

    #[test]
    fn an_unsorted_noisy_curve_and_bad_rates() {
        let c = curve(&[(0.6, 6.0), (0.2, 2.0), (0.4, 3.9), (0.5, 3.8)]);
        // The dip at 0.5 is stepped over: 5.0 lies between (0.4, 3.9) and (0.6, 6.0).
        let load = place(5.0, &c, None).unwrap().offered_load.unwrap();
        assert!((load - (0.4 + 0.2 * (1.1 / 2.1))).abs() < 1e-12, "{load}");
        assert_eq!(place(f64::NAN, &c, None), None);
        assert_eq!(place(-1.0, &c, None), None);
        assert_eq!(place(1.0, &[], None), None);
    }
}

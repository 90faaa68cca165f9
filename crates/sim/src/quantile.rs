//! Quantiles from histogram buckets, computed exactly as Prometheus's `histogram_quantile`
//! computes them (promql/quantile.go, `bucketQuantile`): the rank's bucket is found, and the
//! quantile is interpolated linearly inside it. A quantile is therefore bounded by the bucket it
//! falls in; the report says which.

use serde::Serialize;

/// A quantile read from buckets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Quantile {
    /// The interpolated value, as `histogram_quantile` gives it.
    pub value: f64,
    /// The bucket it fell in: the true quantile lies somewhere in `(lower, upper]`.
    pub lower: f64,
    /// The bucket's upper bound (`le`); infinite when the quantile fell past the last finite one.
    pub upper: f64,
}

/// `histogram_quantile(q, buckets)` for cumulative `(le, count)` buckets sorted by `le`, the
/// last being `+Inf`. `None` where Prometheus returns NaN: no `+Inf` bucket, fewer than two
/// buckets, or no observations.
pub fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> Option<Quantile> {
    if !(0.0..=1.0).contains(&q) {
        return None;
    }
    let &(last_le, _) = buckets.last()?;
    if last_le != f64::INFINITY || buckets.len() < 2 {
        return None;
    }
    // Prometheus forces the counts monotonic (a scrape can catch buckets mid-update).
    let mut counts: Vec<(f64, f64)> = Vec::with_capacity(buckets.len());
    let mut max = f64::NEG_INFINITY;
    for &(le, c) in buckets {
        max = max.max(c);
        counts.push((le, max));
    }
    let observations = counts[counts.len() - 1].1;
    if observations <= 0.0 || observations.is_nan() {
        return None;
    }
    let mut rank = q * observations;
    let b = counts.iter().position(|&(_, c)| c >= rank).unwrap_or(counts.len() - 1);
    if b == counts.len() - 1 {
        // Past the last finite bound: Prometheus answers that bound.
        let le = counts[counts.len() - 2].0;
        return Some(Quantile { value: le, lower: le, upper: f64::INFINITY });
    }
    if b == 0 && counts[0].0 <= 0.0 {
        return Some(Quantile { value: counts[0].0, lower: f64::NEG_INFINITY, upper: counts[0].0 });
    }
    let (mut start, end, mut count) = (0.0, counts[b].0, counts[b].1);
    if b > 0 {
        start = counts[b - 1].0;
        count -= counts[b - 1].1;
        rank -= counts[b - 1].1;
    }
    Some(Quantile { value: start + (end - start) * (rank / count), lower: start, upper: end })
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: f64 = f64::INFINITY;

    /// A row: q, buckets, expected value (None for Prometheus's NaN).
    type Row<'a> = (f64, &'a [(f64, f64)], Option<f64>);

    #[test]
    fn matches_prometheus_bucket_quantile() {
        let b = [(0.1, 10.0), (0.5, 60.0), (1.0, 90.0), (INF, 100.0)];
        let rows: &[Row] = &[
            // Rank 50 of 100 lies in (0.1, 0.5]: 0.1 + 0.4 x (40 / 50).
            (0.5, &b, Some(0.1 + 0.4 * 0.8)),
            // Rank 5 in the first bucket, interpolated from 0.
            (0.05, &b, Some(0.05)),
            // Rank 99 is past the last finite bound: that bound.
            (0.99, &b, Some(1.0)),
            (0.9, &b, Some(1.0)),
            (0.0, &b, Some(0.0)),
            // No +Inf bucket, a lone bucket, no observations, q out of range.
            (0.5, &[(0.1, 1.0), (1.0, 2.0)], None),
            (0.5, &[(INF, 3.0)], None),
            (0.5, &[(1.0, 0.0), (INF, 0.0)], None),
            (1.5, &b, None),
            // Non-monotonic counts are forced monotonic: (0.5, 5) reads as (0.5, 10), so rank 10 ends the first bucket.
            (0.5, &[(0.1, 10.0), (0.5, 5.0), (1.0, 20.0), (INF, 20.0)], Some(0.1)),
        ];
        for (q, buckets, want) in rows {
            let got = histogram_quantile(*q, buckets).map(|x| x.value);
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-12, "q={q} {buckets:?}: {g} != {w}"),
                (g, w) => assert_eq!(g, *w, "q={q} {buckets:?}"),
            }
        }
    }

    #[test]
    fn says_which_bucket_bounds_the_quantile() {
        let q = histogram_quantile(0.5, &[(0.1, 10.0), (0.5, 60.0), (INF, 100.0)]).unwrap();
        assert_eq!((q.lower, q.upper), (0.1, 0.5));
        let q = histogram_quantile(0.99, &[(0.1, 10.0), (0.5, 60.0), (INF, 100.0)]).unwrap();
        assert_eq!((q.value, q.lower, q.upper), (0.5, 0.5, INF));
    }
}

//! Summary statistics: exact percentiles by selection (no full sort) and a fine log histogram for
//! samples too numerous to keep (inter-token latencies).

use serde::{Deserialize, Serialize};

/// Mean and percentiles of one latency, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Number of samples (0 means every other field is 0).
    pub count: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// Mean and p50/p90/p99 by linear interpolation between order statistics (numpy's default).
/// Reorders `values`; runs in linear time by nested selection instead of a sort.
pub fn stat_of(values: &mut [f64]) -> Stat {
    let n = values.len();
    if n == 0 {
        return Stat::default();
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    // Select from the highest percentile down: each selection leaves everything below its rank
    // in the prefix, so the next one searches only that prefix.
    let p99 = percentile_prefix(values, n, 0.99);
    let p90 = percentile_prefix(values, n, 0.90);
    let p50 = percentile_prefix(values, n, 0.50);
    Stat { count: n as u64, mean, p50, p90, p99 }
}

/// The `q` quantile of the `n` values, all of which are in `values` (the prefix below the rank of
/// any previously selected higher quantile, with the rest after it).
fn percentile_prefix(values: &mut [f64], n: usize, q: f64) -> f64 {
    let h = (n - 1) as f64 * q;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    // Only the prefix up to lo + 1 can hold the order statistics lo and lo + 1 once a higher
    // quantile has been selected, but selecting in the whole slice keeps this simple and correct.
    let (_, lo_value, upper) = values.select_nth_unstable_by(lo, f64::total_cmp);
    let lo_value = *lo_value;
    if frac == 0.0 || upper.is_empty() {
        return lo_value;
    }
    let hi_value = upper.iter().copied().fold(f64::INFINITY, f64::min);
    lo_value + frac * (hi_value - lo_value)
}

/// A histogram with geometric bins of about 1% relative width, from 1 µs to 10,000 s.
#[derive(Clone, Debug, PartialEq)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
    sum: f64,
}

const LOG_LO: f64 = 1e-6;
const LOG_RATIO: f64 = 1.01;
const LOG_BINS: usize = 2316; // ln(1e10) / ln(1.01) = 2314.1

/// Bin edges, computed once: `powi` per lookup was a third of a RAG run's time.
static LOWER_EDGES: std::sync::LazyLock<Vec<f64>> =
    std::sync::LazyLock::new(|| (0..=LOG_BINS).map(|i| LOG_LO * LOG_RATIO.powi(i as i32)).collect());

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram { counts: vec![0; LOG_BINS], total: 0, sum: 0.0 }
    }
}

impl LogHistogram {
    fn bin(v: f64) -> usize {
        if v <= LOG_LO {
            return 0;
        }
        let mut i = (((v / LOG_LO).ln() / LOG_RATIO.ln()) as usize).min(LOG_BINS - 1);
        // The logarithm can land one bin off at an edge; settle on the bin the edges say, so
        // single adds and ramps (which count against the edges) agree exactly.
        if i > 0 && v < Self::lower_edge(i) {
            i -= 1;
        } else if i + 1 < LOG_BINS && v >= Self::lower_edge(i + 1) {
            i += 1;
        }
        i
    }

    fn lower_edge(i: usize) -> f64 {
        LOWER_EDGES[i.min(LOG_BINS)]
    }

    /// Adds `count` samples of value `v`.
    pub fn add(&mut self, v: f64, count: u64) {
        if count == 0 {
            return;
        }
        self.counts[Self::bin(v)] += count;
        self.total += count;
        self.sum += v * count as f64;
    }

    /// Adds `multiplicity` copies of the ramp `first, first + step, ..., first + (len - 1) step`
    /// in time proportional to the bins it spans, not to `len`.
    pub fn add_ramp(&mut self, first: f64, step: f64, len: u64, multiplicity: u64) {
        if len == 0 || multiplicity == 0 {
            return;
        }
        if step <= 0.0 || len == 1 {
            self.add(first, len * multiplicity);
            return;
        }
        let last = first + step * (len - 1) as f64;
        self.total += len * multiplicity;
        self.sum += (first + last) / 2.0 * (len * multiplicity) as f64;
        let (mut bin, last_bin) = (Self::bin(first), Self::bin(last));
        let mut done = 0u64;
        while bin < last_bin && done < len {
            // Ramp elements below the bin's upper edge: j < (edge - first) / step.
            let below = ((Self::lower_edge(bin + 1) - first) / step).ceil().clamp(0.0, len as f64) as u64;
            let in_bin = below.saturating_sub(done);
            self.counts[bin] += in_bin * multiplicity;
            done += in_bin;
            bin += 1;
        }
        self.counts[last_bin] += (len - done) * multiplicity;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Mean and percentiles; each percentile is a bin's geometric centre, so within about 0.5%.
    pub fn stat(&self) -> Stat {
        if self.total == 0 {
            return Stat::default();
        }
        let q = |q: f64| {
            let h = (self.total - 1) as f64 * q;
            let lo = h.floor() as u64;
            let frac = h - lo as f64;
            let a = self.value_at_rank(lo);
            if frac == 0.0 { a } else { a + frac * (self.value_at_rank(lo + 1) - a) }
        };
        Stat { count: self.total, mean: self.sum / self.total as f64, p50: q(0.5), p90: q(0.9), p99: q(0.99) }
    }

    /// The value of the `rank`-th smallest sample (0-based), to bin resolution.
    fn value_at_rank(&self, rank: u64) -> f64 {
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return Self::lower_edge(i) * LOG_RATIO.sqrt();
            }
        }
        Self::lower_edge(LOG_BINS - 1)
    }

    /// Samples at or below `le` (bins are attributed by their centre), for Prometheus buckets.
    pub fn count_le(&self, le: f64) -> u64 {
        self.counts
            .iter()
            .enumerate()
            .take_while(|(i, _)| Self::lower_edge(*i) * LOG_RATIO.sqrt() <= le)
            .map(|(_, c)| c)
            .sum()
    }

    /// Sum of all samples.
    pub fn sum(&self) -> f64 {
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy.percentile(x, q) with the default linear method, for comparison.
    fn numpy(sorted: &[f64], q: f64) -> f64 {
        let h = (sorted.len() - 1) as f64 * q;
        let lo = h.floor() as usize;
        let hi = (lo + 1).min(sorted.len() - 1);
        sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
    }

    #[test]
    fn selection_percentiles_equal_sorted_interpolation() {
        for n in [1usize, 2, 3, 10, 101, 1000, 4321] {
            let mut v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1009) as f64 * 0.37 + (i % 3) as f64).collect();
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let s = stat_of(&mut v);
            assert_eq!(s.p50, numpy(&sorted, 0.5), "n={n}");
            assert_eq!(s.p90, numpy(&sorted, 0.9), "n={n}");
            assert_eq!(s.p99, numpy(&sorted, 0.99), "n={n}");
            assert_eq!(s.count, n as u64);
        }
    }

    #[test]
    fn known_small_case() {
        let s = stat_of(&mut [4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.mean, s.p50, s.p90), (2.5, 2.5, 3.7));
    }

    #[test]
    fn histogram_percentiles_within_one_percent() {
        let mut h = LogHistogram::default();
        let mut exact: Vec<f64> = (1..=10_000).map(|i| i as f64 * 1e-4).collect();
        for &v in &exact {
            h.add(v, 1);
        }
        let (a, b) = (h.stat(), stat_of(&mut exact));
        for (x, y) in [(a.p50, b.p50), (a.p90, b.p90), (a.p99, b.p99)] {
            assert!((x / y - 1.0).abs() < 0.01, "{x} vs {y}");
        }
        assert!((a.mean / b.mean - 1.0).abs() < 1e-12);
    }

    #[test]
    fn ramp_equals_adding_each_element() {
        for (first, step, len, mult) in
            [(0.010, 1e-5, 5000, 3), (0.5, 0.01, 100, 1), (0.02, 0.0, 7, 2), (1e-3, 1e-3, 1, 4)]
        {
            let (mut a, mut b) = (LogHistogram::default(), LogHistogram::default());
            a.add_ramp(first, step, len, mult);
            for j in 0..len {
                b.add(first + step * j as f64, mult);
            }
            assert_eq!(a.counts, b.counts, "ramp {first} {step} {len}");
            assert_eq!(a.total, b.total);
            assert!((a.sum / b.sum - 1.0).abs() < 1e-9);
        }
    }
}

//! Summary statistics: exact percentiles by selection (no full sort) and a fine log histogram for
//! samples too numerous to keep (inter-token latencies), exact past its top.

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
    let mut up = Ascending::new(values);
    let (p50, p90, p99) = (up.quantile(0.50), up.quantile(0.90), up.quantile(0.99));
    Stat { count: n as u64, mean, p50, p90, p99 }
}

/// The quantiles `qs` (each 0-1) of `values`, by the same interpolation (and the same selection)
/// as [`stat_of`]; empty for no values.
pub fn quantiles(values: &[f64], qs: &[f64]) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut scratch = values.to_vec();
    let q = |i: usize| qs[i].clamp(0.0, 1.0);
    let mut up = Ascending::new(&mut scratch);
    let mut out = vec![0.0; qs.len()];
    let mut done = vec![false; qs.len()];
    // Smallest first (a chart's grid is already in order; a handful of quantiles need no sort).
    while let Some(i) = (0..qs.len()).filter(|&i| !done[i]).min_by(|&a, &b| q(a).total_cmp(&q(b))) {
        out[i] = up.quantile(q(i));
        done[i] = true;
    }
    out
}

/// Quantiles taken in ascending order, each selection searching only what lies above the last
/// one: p50 over all the values, then p90 over the upper half, then p99 over the top tenth (1.6
/// passes instead of 3). Order statistics do not depend on the arrangement, so the results are
/// the same as selecting each in the whole slice.
struct Ascending<'a> {
    values: &'a mut [f64],
    /// The rank selected last (it sits at its own index, every higher rank after it) and the
    /// order statistic just above it, if any.
    last: Option<(usize, Option<f64>)>,
}

impl<'a> Ascending<'a> {
    fn new(values: &'a mut [f64]) -> Self {
        Ascending { values, last: None }
    }

    /// The `q` quantile; `q` at least the last one asked for.
    fn quantile(&mut self, q: f64) -> f64 {
        let n = self.values.len();
        let h = (n - 1) as f64 * q;
        let lo = h.floor() as usize;
        let frac = h - lo as f64;
        let (lo_value, hi_value) = match self.last {
            Some((rank, above)) if rank == lo => (self.values[lo], above),
            _ => {
                // Every rank from `from` on lies in values[from..], none below it.
                let from = self.last.map_or(0, |(rank, _)| rank + 1);
                debug_assert!(lo >= from, "quantiles are taken in ascending order");
                let (_, lo_value, upper) = self.values[from..].select_nth_unstable_by(lo - from, f64::total_cmp);
                let above = (!upper.is_empty()).then(|| upper.iter().copied().fold(f64::INFINITY, f64::min));
                (*lo_value, above)
            }
        };
        self.last = Some((lo, hi_value));
        match hi_value {
            Some(hi) if frac != 0.0 => lo_value + frac * (hi - lo_value),
            _ => lo_value,
        }
    }
}

/// A histogram with geometric bins of about 1% relative width, from 1 µs to about 10,000 s.
/// Samples past the top bin (only absurd step times make them) are kept exactly, as ramps, so no
/// percentile is ever clamped to the top.
#[derive(Clone, Debug, PartialEq)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
    sum: f64,
    /// Samples at or past [`top`](Self::top), as `first, first + step, ...` ramps.
    over: Vec<Ramp>,
    over_total: u64,
}

/// `len` values `first + step x j`, each `multiplicity` times.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ramp {
    first: f64,
    step: f64,
    len: u64,
    multiplicity: u64,
}

impl Ramp {
    fn value(&self, j: u64) -> f64 {
        self.first + self.step * j as f64
    }

    /// Samples of this ramp at or below `x`.
    fn count_le(&self, x: f64) -> u64 {
        let n = if x < self.first {
            0
        } else if self.step <= 0.0 {
            self.len
        } else {
            let mut k = (((x - self.first) / self.step).floor() as u64).saturating_add(1).min(self.len);
            // Settle rounding at the edges against the values themselves.
            while k > 0 && self.value(k - 1) > x {
                k -= 1;
            }
            while k < self.len && self.value(k) <= x {
                k += 1;
            }
            k
        };
        n * self.multiplicity
    }
}

const LOG_LO: f64 = 1e-6;
const LOG_RATIO: f64 = 1.01;
const LOG_BINS: usize = 2316; // ln(1e10) / ln(1.01) = 2314.1
/// Bit shift from a positive float to its key: its exponent and the top 7 bits of its mantissa,
/// so 128 keys an octave, each spanning a ratio of at most 1 + 2^-7 = 1.0078, less than a bin's.
const KEY_SHIFT: u32 = 52 - 7;

/// The bin edges, and the bin of each key's smallest float, computed once (at run time: the
/// page's wasm carries no table). `powi` per lookup was a third of a RAG run's time, and a
/// lookup by the key, settled by one edge, is cheaper than the quartic guess of the float's
/// logarithm it replaced.
struct Bins {
    /// `LOG_LO * LOG_RATIO^i`, for i from 0 to `LOG_BINS`.
    lower_edges: [f64; LOG_BINS + 1],
    /// The key of `LOG_LO`, the first in `of_key`.
    first_key: usize,
    /// The bin of each key's smallest float, up to the key of the top edge.
    of_key: Vec<u16>,
}

static BINS: std::sync::LazyLock<Bins> = std::sync::LazyLock::new(|| {
    let lower_edges: [f64; LOG_BINS + 1] = std::array::from_fn(|i| LOG_LO * libm::pow(LOG_RATIO, i as f64));
    let first_key = (LOG_LO.to_bits() >> KEY_SHIFT) as usize;
    let last_key = (lower_edges[LOG_BINS].to_bits() >> KEY_SHIFT) as usize;
    let of_key = (first_key..=last_key)
        .map(|key| {
            let smallest = f64::from_bits((key as u64) << KEY_SHIFT);
            lower_edges[..LOG_BINS].partition_point(|&e| e <= smallest).saturating_sub(1) as u16
        })
        .collect();
    Bins { lower_edges, first_key, of_key }
});

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram { counts: vec![0; LOG_BINS], total: 0, sum: 0.0, over: Vec::new(), over_total: 0 }
    }
}

impl LogHistogram {
    /// The bin whose edges hold `v`: `lower_edge(i) <= v < lower_edge(i + 1)`, clamped to the
    /// bins (NaN and anything at most `LOG_LO` in bin 0).
    fn bin(v: f64) -> usize {
        if v.is_nan() || v <= LOG_LO {
            return 0;
        }
        // A key spans less than a bin, so `v` is in its smallest float's bin or the next: one
        // edge settles which, exactly (single adds and ramps, which count against the edges,
        // agree).
        let bins: &Bins = &BINS;
        let key = (v.to_bits() >> KEY_SHIFT) as usize - bins.first_key;
        let Some(&bin) = bins.of_key.get(key) else { return LOG_BINS - 1 };
        let bin = bin as usize;
        bin + usize::from(bin + 1 < LOG_BINS && v >= bins.lower_edges[bin + 1])
    }

    fn lower_edge(i: usize) -> f64 {
        BINS.lower_edges[i.min(LOG_BINS)]
    }

    /// The upper edge of the top bin: samples from here up are kept exactly.
    pub fn top() -> f64 {
        Self::lower_edge(LOG_BINS)
    }

    /// Adds `count` samples of value `v`.
    pub fn add(&mut self, v: f64, count: u64) {
        if count == 0 {
            return;
        }
        if v >= Self::top() {
            self.add_over(Ramp { first: v, step: 0.0, len: 1, multiplicity: count });
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
        if last >= Self::top() {
            // Split: the part below the top into bins, the rest exactly.
            let ramp = Ramp { first, step, len, multiplicity };
            let below = ramp.count_le(Self::top().next_down()) / multiplicity;
            self.add_over(Ramp { first: ramp.value(below), step, len: len - below, multiplicity });
            self.add_ramp(first, step, below, multiplicity);
            return;
        }
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

    fn add_over(&mut self, ramp: Ramp) {
        let n = ramp.len * ramp.multiplicity;
        self.total += n;
        self.over_total += n;
        self.sum += (ramp.first + ramp.value(ramp.len - 1)) / 2.0 * n as f64;
        self.over.push(ramp);
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

    /// The value of the `rank`-th smallest sample (0-based), to bin resolution (exact past the top).
    fn value_at_rank(&self, rank: u64) -> f64 {
        let binned = self.total - self.over_total;
        if rank >= binned {
            return self.exact_at_rank(rank - binned);
        }
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return Self::lower_edge(i) * LOG_RATIO.sqrt();
            }
        }
        Self::lower_edge(LOG_BINS - 1)
    }

    /// The `rank`-th smallest sample past the top: the least value `x` of the kept ramps with
    /// more than `rank` samples at or below it, found by bisection over the ordered bits of
    /// positive floats (at most 64 rounds, each linear in the ramps).
    fn exact_at_rank(&self, rank: u64) -> f64 {
        let below = |x: f64| self.over.iter().map(|r| r.count_le(x)).sum::<u64>();
        let (mut lo, mut hi) = (Self::top().to_bits(), f64::MAX.to_bits());
        if below(f64::from_bits(lo)) > rank {
            return f64::from_bits(lo);
        }
        // Invariant: below(lo) <= rank < below(hi).
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if below(f64::from_bits(mid)) > rank {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        f64::from_bits(hi)
    }

    /// Samples at or below `le` (bins are attributed by their centre), for Prometheus buckets.
    pub fn count_le(&self, le: f64) -> u64 {
        let binned: u64 = self
            .counts
            .iter()
            .enumerate()
            .take_while(|(i, _)| Self::lower_edge(*i) * LOG_RATIO.sqrt() <= le)
            .map(|(_, c)| c)
            .sum();
        binned + self.over.iter().map(|r| r.count_le(le)).sum::<u64>()
    }

    /// Sum of all samples.
    pub fn sum(&self) -> f64 {
        self.sum
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn quantiles_agree_with_stat_of() {
        let values: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 1000) as f64 * 0.01).collect();
        let stat = stat_of(&mut values.clone());
        let q = quantiles(&values, &[0.5, 0.9, 0.99, 1.0, 0.0]);
        assert_eq!(&q[..3], &[stat.p50, stat.p90, stat.p99]);
        assert_eq!((q[3], q[4]), (9.99, 0.0));
        assert!(quantiles(&[], &[0.5]).is_empty());
    }

    use super::*;

    /// numpy.percentile(x, q) with the default linear method, for comparison.
    fn numpy(sorted: &[f64], q: f64) -> f64 {
        let h = (sorted.len() - 1) as f64 * q;
        let lo = h.floor() as usize;
        let hi = (lo + 1).min(sorted.len() - 1);
        sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
    }

    #[test]
    fn a_value_lands_in_the_bin_its_edges_say() {
        // By the edges themselves: the last lower edge at or below v.
        let by_edges = |v: f64| {
            if v.is_nan() || v <= LOG_LO {
                0
            } else {
                BINS.lower_edges[..LOG_BINS].partition_point(|&e| e <= v).saturating_sub(1)
            }
        };
        for i in 0..=LOG_BINS {
            let e = LogHistogram::lower_edge(i);
            for v in [e, f64::from_bits(e.to_bits() - 1), f64::from_bits(e.to_bits() + 1), e * 1.005] {
                assert_eq!(LogHistogram::bin(v), by_edges(v), "v = {v:e} near edge {i}");
            }
        }
        // Every key spans at most two bins (the lookup settles by one edge), and a key's smallest
        // and largest floats land where the edges say.
        for key in BINS.first_key..BINS.first_key + BINS.of_key.len() {
            let (smallest, largest) =
                (f64::from_bits((key as u64) << KEY_SHIFT), f64::from_bits(((key as u64 + 1) << KEY_SHIFT) - 1));
            assert!(by_edges(largest) - by_edges(smallest) <= 1, "key {key} spans more than two bins");
            for v in [smallest, largest] {
                assert_eq!(LogHistogram::bin(v), by_edges(v), "v = {v:e}, key {key}");
            }
        }
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = libm::pow(10.0, -8.0 + 20.0 * (x >> 11) as f64 / (1u64 << 53) as f64);
            assert_eq!(LogHistogram::bin(v), by_edges(v), "v = {v:e}");
        }
        for v in [0.0, -1.0, f64::NAN, f64::MIN_POSITIVE, LOG_LO, 1e300, f64::INFINITY] {
            assert_eq!(LogHistogram::bin(v), by_edges(v), "v = {v:e}");
        }
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
    fn quantiles_in_any_order_equal_sorted_interpolation_with_ties() {
        let qs = [0.99, 0.0, 0.5, 0.9, 0.5, 1.0, 0.25, 0.999];
        for n in [1usize, 2, 3, 7, 64, 999, 5000] {
            // Few distinct values: ranks that share a value, and quantiles that share a rank.
            let v: Vec<f64> = (0..n).map(|i| ((i * 31) % 5) as f64 * 0.5).collect();
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let got = quantiles(&v, &qs);
            for (q, g) in qs.iter().zip(&got) {
                assert_eq!(*g, numpy(&sorted, *q), "n={n} q={q}");
            }
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
    fn past_the_top_percentiles_are_exact() {
        // Gaps of hours (a step time no real engine has), beside ordinary ones.
        let top = LogHistogram::top();
        let mut h = LogHistogram::default();
        let mut exact = Vec::new();
        for (first, step, len, mult) in [(0.01, 0.0, 10u64, 1u64), (top * 0.999, top * 0.01, 40, 2), (3e4, 7.5, 25, 1)]
        {
            h.add_ramp(first, step, len, mult);
            for j in 0..len {
                for _ in 0..mult {
                    exact.push(first + step * j as f64);
                }
            }
        }
        h.add(5e7, 3);
        exact.extend([5e7; 3]);
        let (a, b) = (h.stat(), stat_of(&mut exact.clone()));
        assert_eq!(a.count, b.count);
        assert_eq!(a.p99, b.p99, "p99 past the top");
        assert_eq!(a.p90, b.p90, "p90 past the top");
        assert!(a.p99 > 10_142.0 * 4.0, "not clamped to the top: {}", a.p99);
        assert!((a.mean / b.mean - 1.0).abs() < 1e-12);
        // Prometheus buckets count the exact samples too.
        let at_most = exact.iter().filter(|&&v| v <= 4e4).count() as u64;
        assert_eq!(h.count_le(4e4), at_most);
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

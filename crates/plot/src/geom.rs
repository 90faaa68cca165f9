//! Numbers before pixels: data cleaning, axis ranges and ticks, clipping, interpolation.
//!
//! Nothing here draws, so the parts most likely to go wrong on odd input are tested directly.

/// A polyline in display coordinates (log10 already applied where an axis is logarithmic).
pub(crate) type Run = Vec<(f64, f64)>;

/// Smallest and largest finite value, if any.
pub(crate) fn finite_span(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// Pairs `xs` with `ys` (up to the shorter length), sorted by x, mapped through `to_display`
/// (which returns `None` for values the axis cannot show, e.g. 0 on a log axis), and split
/// into runs wherever a value is missing, so a gap shows rather than a misleading bridge.
pub(crate) fn runs(xs: &[f64], ys: &[f64], to_display: impl Fn(f64) -> Option<f64>) -> Vec<Run> {
    let mut pairs: Vec<(f64, f64)> = xs.iter().zip(ys).filter(|(x, _)| x.is_finite()).map(|(&x, &y)| (x, y)).collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut current = Vec::new();
    for (x, y) in pairs {
        match to_display(y).filter(|d| d.is_finite()) {
            Some(d) => current.push((x, d)),
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Identity for linear axes: every finite value can be shown.
pub(crate) fn linear(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// log10 for logarithmic axes: only positive finite values can be shown.
pub(crate) fn log10(v: f64) -> Option<f64> {
    (v.is_finite() && v > 0.0).then(|| v.log10())
}

/// A rectangle in display coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rect {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

impl Rect {
    pub(crate) fn contains(&self, (x, y): (f64, f64)) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.y0..=self.y1).contains(&y)
    }

    /// Liang-Barsky: the part of segment a-b inside the rectangle, as parameters t0 <= t1.
    pub(crate) fn clip_segment(&self, a: (f64, f64), b: (f64, f64)) -> Option<(f64, f64)> {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let mut t0: f64 = 0.0;
        let mut t1: f64 = 1.0;
        for (p, q) in [(-dx, a.0 - self.x0), (dx, self.x1 - a.0), (-dy, a.1 - self.y0), (dy, self.y1 - a.1)] {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        (t0 <= t1).then_some((t0, t1))
    }

    /// Cuts runs to the rectangle: plotters draws outside its plotting area (over the labels)
    /// when asked, so lines leaving the range (a clipped linear latency axis) end at its edge.
    pub(crate) fn clip(&self, runs: &[Run]) -> Vec<Run> {
        let mut out = Vec::new();
        for run in runs {
            if run.len() == 1 {
                if self.contains(run[0]) {
                    out.push(run.clone());
                }
                continue;
            }
            let mut current: Run = Vec::new();
            for w in run.windows(2) {
                let (a, b) = (w[0], w[1]);
                let Some((t0, t1)) = self.clip_segment(a, b) else {
                    if !current.is_empty() {
                        out.push(std::mem::take(&mut current));
                    }
                    continue;
                };
                let at = |t: f64| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
                if t0 > 0.0 || current.is_empty() {
                    if !current.is_empty() {
                        out.push(std::mem::take(&mut current));
                    }
                    current.push(at(t0));
                }
                current.push(at(t1));
                if t1 < 1.0 {
                    out.push(std::mem::take(&mut current));
                }
            }
            if !current.is_empty() {
                out.push(current);
            }
        }
        out
    }
}

/// The y of the drawn polyline at `x` (linear between neighbours, in display space, so a
/// marker sits exactly on the line the reader sees); `None` outside every run.
pub(crate) fn interpolate(runs: &[Run], x: f64) -> Option<f64> {
    if !x.is_finite() {
        return None;
    }
    for run in runs {
        if let [only] = run.as_slice() {
            if only.0 == x {
                return Some(only.1);
            }
            continue;
        }
        for w in run.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a.0 <= x && x <= b.0 {
                if b.0 == a.0 {
                    return Some(a.1);
                }
                return Some(a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0));
            }
        }
    }
    None
}

/// Up to `max_count` round ticks (steps 1, 2, 2.5 or 5 x 10^k) inside [lo, hi].
pub(crate) fn nice_ticks(lo: f64, hi: f64, max_count: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return if lo.is_finite() { vec![lo] } else { Vec::new() };
    }
    let step = nice_step(lo, hi, max_count.max(2));
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// The step `nice_ticks` uses for [lo, hi].
pub(crate) fn nice_step(lo: f64, hi: f64, max_count: usize) -> f64 {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let start = (span / max_count as f64).log10().floor() as i32 - 1;
    // Bounded: a step 1e3 times the span always fits, so this ends well before the bound.
    for exponent in start..start.saturating_add(8) {
        for m in [1.0, 2.0, 2.5, 5.0] {
            let step = m * 10f64.powi(exponent);
            let count = (hi / step + 1e-9).floor() - (lo / step - 1e-9).ceil() + 1.0;
            if count <= max_count as f64 {
                return step;
            }
        }
    }
    span
}

/// Ticks for a log10 axis spanning decades `lo_dec..=hi_dec`, in display (log10) space:
/// labelled ticks (decades, skipping some when crowded; with 2 and 5 added when there is
/// room) and unlabelled minor ticks (2..9 x 10^k) for faint grid lines that say "log".
pub(crate) fn log_ticks(lo_dec: i32, hi_dec: i32, max_count: usize) -> (Vec<f64>, Vec<f64>) {
    let decades = (hi_dec - lo_dec).max(0) as usize;
    let every = decades / max_count.max(2) + 1;
    let mut major: Vec<f64> =
        (lo_dec..=hi_dec).filter(|d| ((d - lo_dec) as usize).is_multiple_of(every)).map(f64::from).collect();
    let with_25 = (decades + 1) * 3 <= max_count + 2;
    let mut minor = Vec::new();
    for d in lo_dec..hi_dec {
        for m in 2..=9 {
            let v = f64::from(d) + f64::from(m).log10();
            if with_25 && (m == 2 || m == 5) {
                major.push(v);
            } else {
                minor.push(v);
            }
        }
    }
    major.sort_by(f64::total_cmp);
    (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_break_at_missing_values_and_sort_by_x() {
        let xs = [0.3, 0.1, 0.2, f64::NAN, 0.5, 0.4];
        let ys = [3.0, 1.0, f64::NAN, 9.0, 5.0, 4.0, 99.0];
        assert_eq!(runs(&xs, &ys, linear), vec![vec![(0.1, 1.0)], vec![(0.3, 3.0), (0.4, 4.0), (0.5, 5.0)]]);
        assert_eq!(runs(&[1.0, 2.0], &[0.0, 10.0], log10), vec![vec![(2.0, 1.0)]]);
        assert!(runs(&[], &[1.0], linear).is_empty());
    }

    #[test]
    fn clipping_cuts_lines_at_the_edge() {
        let r = Rect { x0: 0.0, x1: 10.0, y0: 0.0, y1: 10.0 };
        for (input, expected) in [
            (vec![(0.0, 0.0), (5.0, 5.0)], vec![vec![(0.0, 0.0), (5.0, 5.0)]]),
            (vec![(0.0, 5.0), (10.0, 25.0)], vec![vec![(0.0, 5.0), (2.5, 10.0)]]),
            (
                vec![(0.0, 5.0), (2.0, 20.0), (4.0, 5.0), (6.0, 5.0)],
                vec![vec![(0.0, 5.0), (2.0 / 3.0, 10.0)], vec![(4.0 - 2.0 / 3.0, 10.0), (4.0, 5.0), (6.0, 5.0)]],
            ),
            (vec![(0.0, 20.0), (5.0, 30.0)], vec![]),
            (vec![(5.0, 5.0)], vec![vec![(5.0, 5.0)]]),
            (vec![(5.0, 50.0)], vec![]),
        ] {
            let got = r.clip(std::slice::from_ref(&input));
            assert_eq!(got.len(), expected.len(), "{input:?} -> {got:?}");
            for (g, e) in got.iter().zip(&expected) {
                assert_eq!(g.len(), e.len(), "{input:?} -> {got:?}");
                for (p, q) in g.iter().zip(e) {
                    assert!((p.0 - q.0).abs() < 1e-9 && (p.1 - q.1).abs() < 1e-9, "{got:?}");
                }
            }
        }
    }

    #[test]
    fn interpolation_follows_the_drawn_line() {
        let r = vec![vec![(0.0, 0.0), (1.0, 10.0)], vec![(2.0, 5.0)]];
        for (x, expected) in [(0.5, Some(5.0)), (1.0, Some(10.0)), (1.5, None), (2.0, Some(5.0)), (f64::NAN, None)] {
            assert_eq!(interpolate(&r, x), expected, "x {x}");
        }
    }

    #[test]
    fn nice_ticks_fit_the_count() {
        for (lo, hi, n, expected) in [
            (0.0, 1.2, 7, vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2]),
            (0.0, 1.2, 5, vec![0.0, 0.25, 0.5, 0.75, 1.0]),
            (0.0, 1.2, 3, vec![0.0, 0.5, 1.0]),
            (0.0, 70.0, 6, vec![0.0, 20.0, 40.0, 60.0]),
            (2.0, 2.0, 5, vec![2.0]),
            (f64::NAN, 1.0, 5, vec![]),
        ] {
            let got = nice_ticks(lo, hi, n);
            assert!(got.len() <= n.max(1), "{lo}..{hi}: {got:?}");
            assert_eq!(got.len(), expected.len(), "{lo}..{hi}: {got:?}");
            for (g, e) in got.iter().zip(&expected) {
                assert!((g - e).abs() < 1e-9, "{lo}..{hi}: {got:?}");
            }
        }
    }

    #[test]
    fn log_ticks_thin_out_and_fill_in() {
        let (major, minor) = log_ticks(-1, 2, 6);
        assert_eq!(major, vec![-1.0, 0.0, 1.0, 2.0]);
        assert_eq!(minor.len(), 3 * 8);
        let (major, _) = log_ticks(-2, 3, 3);
        assert_eq!(major, vec![-2.0, 0.0, 2.0]);
        let (major, _) = log_ticks(-1, 0, 6);
        let labels: Vec<String> = major.iter().map(|v| crate::format_seconds(10f64.powf(*v))).collect();
        assert_eq!(labels, ["100 ms", "200 ms", "500 ms", "1 s"]);
    }
}

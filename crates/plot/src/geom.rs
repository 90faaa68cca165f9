//! Numbers before pixels: data cleaning, ranges, clipping, interpolation, and the one mapping
//! from display coordinates to pixels.
//!
//! Nothing here draws, so the parts most likely to go wrong on odd input are tested directly.

/// A polyline in display coordinates (log10 already applied where an axis is logarithmic).
pub(crate) type Run = Vec<(f64, f64)>;

/// Smallest and largest finite value among those added, if any.
///
/// An accumulator fed from slices rather than one function over any iterator: each chart's
/// chain of iterators would compile to its own copy, and the page's wasm budget is tight.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Span(pub Option<(f64, f64)>);

impl Span {
    /// Adds `v` unless it is NaN or infinite.
    pub(crate) fn value(mut self, v: f64) -> Self {
        if v.is_finite() {
            self.0 = Some(self.0.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
        }
        self
    }

    /// Adds `v` if there is one.
    pub(crate) fn maybe(self, v: Option<f64>) -> Self {
        v.map_or(self, |v| self.value(v))
    }

    pub(crate) fn values(self, vs: &[f64]) -> Self {
        vs.iter().fold(self, |s, &v| s.value(v))
    }

    /// Adds the x of every point of `runs`.
    pub(crate) fn xs(self, runs: &[Run]) -> Self {
        runs.iter().flatten().fold(self, |s, p| s.value(p.0))
    }

    /// Adds the y of every point of `runs`.
    pub(crate) fn ys(self, runs: &[Run]) -> Self {
        runs.iter().flatten().fold(self, |s, p| s.value(p.1))
    }
}

/// Pairs `xs` with `ys` (up to the shorter length), sorted by x, mapped through `to_display`
/// (which returns `None` for values the axis cannot show, e.g. 0 on a log axis), and split
/// into runs wherever a value is missing, so a gap shows rather than a misleading bridge.
pub(crate) fn runs(xs: &[f64], ys: &[f64], to_display: fn(f64) -> Option<f64>) -> Vec<Run> {
    let mut pairs: Vec<(f64, f64)> = xs.iter().zip(ys).filter(|(x, _)| x.is_finite()).map(|(&x, &y)| (x, y)).collect();
    sort_by_x(&mut pairs);
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

/// A stable sort by x (all finite). Series nearly always arrive sorted, which takes one pass;
/// otherwise a plain merge sort. Not `sort_by`: the standard library's sort costs about 10 KB
/// of wasm for each element type, and the page's size budget is tight.
fn sort_by_x(pairs: &mut Vec<(f64, f64)>) {
    if pairs.windows(2).all(|w| w[0].0 <= w[1].0) {
        return;
    }
    let n = pairs.len();
    let mut from = std::mem::take(pairs);
    let mut to = Vec::with_capacity(n);
    let mut width = 1;
    while width < n {
        to.clear();
        for start in (0..n).step_by(2 * width) {
            let (mid, end) = ((start + width).min(n), (start + 2 * width).min(n));
            let (mut i, mut j) = (start, mid);
            while i < mid || j < end {
                // Ties take the left run first: that is what keeps equal x in input order.
                if j == end || (i < mid && from[i].0 <= from[j].0) {
                    to.push(from[i]);
                    i += 1;
                } else {
                    to.push(from[j]);
                    j += 1;
                }
            }
        }
        std::mem::swap(&mut from, &mut to);
        width *= 2;
    }
    *pairs = from;
}

/// Identity for linear axes: every finite value can be shown.
pub(crate) fn linear(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// log10 for logarithmic axes: only positive finite values can be shown.
pub(crate) fn log10(v: f64) -> Option<f64> {
    (v.is_finite() && v > 0.0).then(|| libm::log10(v))
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

    /// Cuts runs to the rectangle: nothing clips drawing to the plot (it would run over the
    /// labels), so lines leaving the range (a clipped linear latency axis) end at its edge.
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

/// Display coordinates to pixels: the plot's display range onto its pixel box, y upwards.
///
/// Every chart element goes through this one mapping (plotters only sees pixels), so lines,
/// grid, ticks and labels cannot disagree about where a value is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Map {
    /// The display range: `x0..x1` runs left to right, `y0..y1` bottom to top.
    pub range: Rect,
    /// The plot's pixels as a half-open box (left, top, right, bottom): x0 maps to the first
    /// column and x1 to the last, y0 to the bottom row and y1 to the top one.
    pub bounds: (i32, i32, i32, i32),
}

impl Map {
    /// The pixel of a display point (display points outside the range map outside the box).
    pub(crate) fn pixel(&self, (x, y): (f64, f64)) -> (i32, i32) {
        let (left, top, right, bottom) = self.bounds;
        let r = &self.range;
        (lerp(x, r.x0, r.x1, left, right - 1), lerp(y, r.y0, r.y1, bottom - 1, top))
    }

    /// Pixels of a run, in order.
    pub(crate) fn pixels(&self, run: &[(f64, f64)]) -> Vec<(i32, i32)> {
        run.iter().map(|&p| self.pixel(p)).collect()
    }
}

/// `v` from `lo..hi` onto pixels `a..b` (either way round), rounded to the nearest pixel.
fn lerp(v: f64, lo: f64, hi: f64, a: i32, b: i32) -> i32 {
    let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    // Saturating: a stray huge value must not wrap around to the other side (NaN becomes 0).
    (f64::from(a) + t * f64::from(b - a)).round().clamp(-1e6, 1e6) as i32
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
    fn sorting_by_x_is_stable() {
        // A scrambled sequence with many equal x; y records the input order.
        let mut pairs: Vec<(f64, f64)> = (0..200).map(|i| (f64::from((i * 37) % 23), f64::from(i))).collect();
        let mut expected = pairs.clone();
        expected.sort_by(|a, b| a.0.total_cmp(&b.0));
        sort_by_x(&mut pairs);
        assert_eq!(pairs, expected);
        let empty: Vec<(f64, f64)> = Vec::new();
        for mut short in [empty, vec![(1.0, 0.0)], vec![(2.0, 0.0), (1.0, 1.0), (1.0, 2.0)]] {
            let mut expected = short.clone();
            expected.sort_by(|a, b| a.0.total_cmp(&b.0));
            sort_by_x(&mut short);
            assert_eq!(short, expected);
        }
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
    fn the_map_puts_the_range_on_the_box_edges_with_y_up() {
        let map = Map { range: Rect { x0: 0.0, x1: 10.0, y0: -1.0, y1: 1.0 }, bounds: (100, 20, 201, 121) };
        for (p, expected) in [
            ((0.0, -1.0), (100, 120)),
            ((10.0, 1.0), (200, 20)),
            ((5.0, 0.0), (150, 70)),
            ((20.0, 3.0), (300, -80)),
            ((f64::NAN, 1e300), (0, -1_000_000)),
        ] {
            assert_eq!(map.pixel(p), expected, "{p:?}");
        }
        let flat = Map { range: Rect { x0: 1.0, x1: 1.0, y0: 0.0, y1: 1.0 }, ..map };
        assert_eq!(flat.pixel((1.0, 0.0)).0, 150);
    }

    #[test]
    fn interpolation_follows_the_drawn_line() {
        let r = vec![vec![(0.0, 0.0), (1.0, 10.0)], vec![(2.0, 5.0)]];
        for (x, expected) in [(0.5, Some(5.0)), (1.0, Some(10.0)), (1.5, None), (2.0, Some(5.0)), (f64::NAN, None)] {
            assert_eq!(interpolate(&r, x), expected, "x {x}");
        }
    }
}

//! Seeded random streams and exact samplers for the continuous distributions the engine draws
//! from: exponential gaps and think times (inversion), standard normal (Box-Muller, pairs kept),
//! lognormal sizes, and gamma gaps for bursty arrivals (Marsaglia-Tsang).
//!
//! `rand_distr` samples these by the ziggurat method, which is faster but carries about 8 KB of
//! tables (4 x 257 floats) that compress poorly: in a page with a 200 KB budget, a logarithm per
//! draw is the better trade. Each sampler is exact, not an approximation.
//!
//! The same seed gives the same draws on every target: the generator is named
//! (`Xoshiro256PlusPlus`), not `SmallRng`, which is a 128-bit generator on 32-bit targets such as
//! wasm32; and the logarithms, exponentials and cosines come from `libm`, not the platform's C
//! library (clippy.toml bans the others). So the page, the CLI and the tests run the same
//! requests and report the same numbers.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// A seeded random stream. It keeps the second normal of each Box-Muller pair, so normals cost
/// one logarithm, one square root and one sine or cosine per pair.
#[derive(Clone, Debug)]
pub struct Stream {
    rng: Xoshiro256PlusPlus,
    spare_normal: Option<f64>,
}

impl Stream {
    /// A stream from a 64-bit seed.
    pub fn new(seed: u64) -> Stream {
        Stream { rng: Xoshiro256PlusPlus::seed_from_u64(seed), spare_normal: None }
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    /// Uniform in (0, 1]: safe to take the logarithm of.
    #[inline]
    fn open_unit(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Uniform integer in `lo..=hi`.
    #[inline]
    pub fn integer(&mut self, lo: u32, hi: u32) -> u32 {
        self.rng.random_range(lo..=hi)
    }

    /// Exponential with mean 1, by inversion.
    #[inline]
    pub fn exp1(&mut self) -> f64 {
        -libm::log(self.open_unit())
    }

    /// Standard normal, by the Box-Muller transform.
    #[inline]
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        let r = (-2.0 * libm::log(self.open_unit())).sqrt();
        let angle = std::f64::consts::TAU * self.uniform();
        // One argument reduction for both (`sincos` gives what `sin` and `cos` give apart).
        let (sin, cos) = libm::sincos(angle);
        self.spare_normal = Some(r * sin);
        r * cos
    }
}

/// Lognormal: `exp(mu + sigma Z)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogNormal {
    /// Mean of the logarithm.
    pub mu: f64,
    /// Standard deviation of the logarithm.
    pub sigma: f64,
}

impl LogNormal {
    /// One draw.
    #[inline]
    pub fn sample(&self, stream: &mut Stream) -> f64 {
        libm::exp(self.log_sample(stream))
    }

    /// One draw's logarithm, `mu + sigma Z`.
    #[inline]
    pub fn log_sample(&self, stream: &mut Stream) -> f64 {
        self.mu + self.sigma * stream.normal()
    }
}

/// Gamma with a shape and a scale, by Marsaglia and Tsang's method (ACM TOMS 2000); shapes
/// below 1 draw shape + 1 and multiply by `U^(1/shape)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gamma {
    scale: f64,
    /// `1 / shape` when the shape is below 1 (the boost), else 0.
    boost: f64,
    d: f64,
    c: f64,
}

impl Gamma {
    /// A gamma distribution; `shape` and `scale` must be positive and finite.
    pub fn new(shape: f64, scale: f64) -> Option<Gamma> {
        if !(shape > 0.0 && shape.is_finite() && scale > 0.0 && scale.is_finite()) {
            return None;
        }
        let (a, boost) = if shape < 1.0 { (shape + 1.0, 1.0 / shape) } else { (shape, 0.0) };
        let d = a - 1.0 / 3.0;
        Some(Gamma { scale, boost, d, c: 1.0 / (9.0 * d).sqrt() })
    }

    /// One draw.
    pub fn sample(&self, stream: &mut Stream) -> f64 {
        let g = loop {
            let x = stream.normal();
            let v = 1.0 + self.c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = stream.open_unit();
            let x2 = x * x;
            if u < 1.0 - 0.0331 * x2 * x2 || libm::log(u) < 0.5 * x2 + self.d * (1.0 - v + libm::log(v)) {
                break self.d * v;
            }
        };
        let g = if self.boost > 0.0 { g * libm::pow(stream.open_unit(), self.boost) } else { g };
        g * self.scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean and variance of `n` draws.
    fn moments(n: usize, mut draw: impl FnMut(&mut Stream) -> f64) -> (f64, f64) {
        let mut stream = Stream::new(11);
        let xs: Vec<f64> = (0..n).map(|_| draw(&mut stream)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
        (mean, var)
    }

    fn close(what: &str, got: f64, want: f64, tol: f64) {
        assert!((got - want).abs() <= tol, "{what}: {got} vs {want} (tolerance {tol})");
    }

    #[test]
    fn exponential_and_normal_moments() {
        let (m, v) = moments(400_000, Stream::exp1);
        close("exp mean", m, 1.0, 0.01);
        close("exp variance", v, 1.0, 0.02);
        let (m, v) = moments(400_000, Stream::normal);
        close("normal mean", m, 0.0, 0.01);
        close("normal variance", v, 1.0, 0.01);
        // The normal's tail: P(|Z| > 2) = 4.55%.
        let mut stream = Stream::new(5);
        let tail = (0..400_000).filter(|_| stream.normal().abs() > 2.0).count() as f64 / 400_000.0;
        close("normal tail", tail, 0.0455, 0.002);
        // The two halves of a pair are uncorrelated.
        let mut stream = Stream::new(9);
        let pairs: Vec<(f64, f64)> = (0..200_000).map(|_| (stream.normal(), stream.normal())).collect();
        let corr = pairs.iter().map(|(a, b)| a * b).sum::<f64>() / pairs.len() as f64;
        close("pair correlation", corr, 0.0, 0.01);
    }

    #[test]
    fn gamma_moments_for_shapes_below_and_above_one() {
        for (shape, scale) in [(0.25, 4.0), (0.5, 2.0), (1.0, 1.0), (2.0, 0.5), (9.0, 1.0 / 9.0)] {
            let g = Gamma::new(shape, scale).unwrap();
            let (m, v) = moments(400_000, |s| g.sample(s));
            close(&format!("gamma({shape}) mean"), m, shape * scale, 0.02 * shape * scale);
            close(&format!("gamma({shape}) variance"), v, shape * scale * scale, 0.05 * shape * scale * scale);
        }
        assert!(Gamma::new(0.0, 1.0).is_none() && Gamma::new(1.0, f64::NAN).is_none());
    }

    #[test]
    fn lognormal_mean() {
        let (sigma, mean) = (0.8, 300.0);
        let d = LogNormal { mu: libm::log(mean) - sigma * sigma / 2.0, sigma };
        let (m, _) = moments(400_000, |s| d.sample(s));
        close("lognormal mean", m, mean, 0.02 * mean);
    }
}

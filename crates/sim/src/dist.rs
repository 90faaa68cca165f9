//! Token-count distributions, resolved from [`DistConfig`] and sampled from a seeded stream.

#[cfg(feature = "empirical")]
use std::sync::Arc;

use crate::config::{DistConfig, DistKind};
use crate::error::ConfigError;
use crate::sampling::{LogNormal, Stream};

/// The largest token count any distribution may produce (also the implicit cap of unbounded ones).
pub const MAX_TOKENS: u64 = 1_000_000;

/// A validated distribution of token counts, always in `1..=MAX_TOKENS`.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenDist {
    /// Always this many tokens.
    Fixed(u32),
    /// Uniform on `min..=max`.
    Uniform {
        /// Smallest value.
        min: u32,
        /// Largest value.
        max: u32,
    },
    /// `1 + failures` of a geometric with success probability `p = 1 / mean`, capped at `max`;
    /// drawn by inversion, `floor(ln(1 - U) / ln(1 - p))`, one logarithm per draw.
    Geometric {
        /// `ln(1 - p)`, or `-inf` when `p = 1` (always one token).
        ln_q: f64,
        /// The requested mean.
        mean: f64,
        /// The cap.
        max: u32,
        /// Whether the cap was given (otherwise it is [`MAX_TOKENS`]).
        capped: bool,
    },
    /// A rounded lognormal, at least 1, capped at `max`.
    Lognormal {
        /// The underlying continuous distribution.
        dist: LogNormal,
        /// The requested mean.
        mean: f64,
        /// The cap.
        max: u32,
        /// Whether the cap was given (otherwise it is [`MAX_TOKENS`]).
        capped: bool,
    },
    /// One column of a [`Joint`] table: drawn alone it has the table's marginal distribution.
    #[cfg(feature = "empirical")]
    Joint {
        /// The table.
        table: Joint,
        /// 0 for prompts, 1 for outputs.
        column: usize,
        /// The column's mean, weighted.
        mean: f64,
        /// The column's weighted mean square.
        mean_square: f64,
        /// The column's largest value.
        max: u32,
    },
}

/// The most rows an empirical table may have.
#[cfg(feature = "empirical")]
pub const MAX_ROWS: usize = 100_000;

/// Prompt and output lengths drawn together from weighted rows.
#[cfg(feature = "empirical")]
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    rows: Arc<[[u32; 2]]>,
    /// Running sums of the weights, for drawing a row by inversion.
    cumulative: Arc<[f64]>,
}

#[cfg(feature = "empirical")]
impl Joint {
    /// Validates `[prompt, output, weight]` rows (their errors named under `path`) and returns the
    /// prompt and output columns, both drawing from one shared table.
    pub fn columns(rows: &[(u64, u64, f64)], path: &str) -> Result<(TokenDist, TokenDist), ConfigError> {
        if rows.is_empty() || rows.len() > MAX_ROWS {
            return Err(ConfigError::new(path, format!("needs 1 to {MAX_ROWS} rows, got {}", rows.len())));
        }
        let mut pairs = Vec::with_capacity(rows.len());
        let mut cumulative = Vec::with_capacity(rows.len());
        let mut total = 0.0;
        for (i, &(prompt, output, weight)) in rows.iter().enumerate() {
            let row = |what: &str| format!("{path}[{i}]{what}");
            if !(1..=MAX_TOKENS).contains(&prompt) {
                return Err(ConfigError::new(
                    row("[0]"),
                    format!("prompt tokens must be from 1 to {MAX_TOKENS}, got {prompt}"),
                ));
            }
            if output > MAX_TOKENS {
                return Err(ConfigError::new(
                    row("[1]"),
                    format!("output tokens must be from 0 to {MAX_TOKENS}, got {output}"),
                ));
            }
            if !(weight.is_finite() && weight > 0.0 && weight <= 1e12) {
                return Err(ConfigError::new(
                    row("[2]"),
                    format!("the weight must be above 0 and at most 1e12, got {weight}"),
                ));
            }
            total += weight;
            cumulative.push(total);
            // vLLM emits at least the first token.
            pairs.push([prompt as u32, (output as u32).max(1)]);
        }
        let table = Joint { rows: pairs.into(), cumulative: cumulative.into() };
        let column = |c: usize| {
            let (mut mean, mut square, mut max) = (0.0, 0.0, 0);
            for (r, w) in table.rows.iter().zip(table.weights()) {
                let v = f64::from(r[c]);
                mean += w * v / total;
                square += w * v * v / total;
                max = max.max(r[c]);
            }
            TokenDist::Joint { table: table.clone(), column: c, mean, mean_square: square, max }
        };
        Ok((column(0), column(1)))
    }

    fn weights(&self) -> impl Iterator<Item = f64> + '_ {
        self.cumulative.iter().scan(0.0, |last, &c| {
            let w = c - *last;
            *last = c;
            Some(w)
        })
    }

    /// Draws one row: `[prompt, output]`.
    pub fn sample(&self, stream: &mut Stream) -> [u32; 2] {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let u = stream.uniform() * total;
        let i = self.cumulative.partition_point(|&c| c <= u).min(self.rows.len() - 1);
        self.rows[i]
    }
}

/// `floor(failures) + 1`, at most `max`, for `failures >= 0` (or -0): the cast floors a
/// non-negative value, where `floor` is a library call on the baseline x86-64 and wasm32 targets.
#[inline]
fn geometric_count(failures: f64, max: u32) -> u32 {
    failures.min(f64::from(max - 1)) as u32 + 1
}

/// `round(v)` (halves away from zero), clamped to `1..=max`, for `v >= 0`: the cast floors, and
/// `v - floor` is exact, without a library call for `round`.
#[inline]
fn rounded_count(v: f64, max: u32) -> u32 {
    let v = v.clamp(0.0, f64::from(max));
    let floor = v as u32;
    (floor + u32::from(v - f64::from(floor) >= 0.5)).clamp(1, max)
}

/// `exp(x)`, or a value near enough to it to give the same [`rounded_count`], always. Natively, a
/// table of 2^(j/64) and a cubic give `exp(x)` within 4e-11 of itself, with no division (libm's
/// has one; a RAG run takes 0.97 of the time); where that could round to another count (within
/// 1e-9 of a half) or leaves the sizes' range, libm's own `exp` decides.
/// `tests::exp_for_count_gives_libm_s_counts` holds the counts equal. The page's wasm takes libm's
/// `exp` at once (the table would weigh 0.7 KB gzipped there).
#[inline]
fn exp_for_count(x: f64) -> f64 {
    #[cfg(not(target_arch = "wasm32"))]
    if x.abs() < 20.0 {
        let v = table_exp(x);
        if (v - (v as u32) as f64 - 0.5).abs() > v * 1e-9 {
            return v;
        }
    }
    libm::exp(x)
}

/// `exp(x)` within a relative 4e-11, for `|x| < 20`: `x = (64 k + j) ln2 / 64 + r` with
/// `|r| <= ln2 / 128`, and `exp(x) = 2^k 2^(j/64) exp(r)`, `exp(r)` by its cubic (whose error is
/// at most `r^4 / 24`, 3.6e-11).
#[cfg(not(target_arch = "wasm32"))]
#[inline]
fn table_exp(x: f64) -> f64 {
    const INV_LN2_64: f64 = 64.0 / std::f64::consts::LN_2;
    const LN2_64: f64 = std::f64::consts::LN_2 / 64.0;
    /// Adding and taking away 1.5 x 2^52 rounds to the nearest integer.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    let n = (x * INV_LN2_64 + ROUND) - ROUND;
    let r = x - n * LN2_64;
    let p = (1.0 + r) + (r * r) * (0.5 + r * (1.0 / 6.0));
    let n = n as i64;
    let scale = f64::from_bits((((n >> 6) + 1023) as u64) << 52);
    (f64::from_bits(EXP2_64THS[(n & 63) as usize]) * scale) * p
}

/// `2^(j/64)`, j = 0..64, each the double nearest the exact value.
#[cfg(not(target_arch = "wasm32"))]
const EXP2_64THS: [u64; 64] = [
    0x3ff0000000000000,
    0x3ff02c9a3e778061,
    0x3ff059b0d3158574,
    0x3ff0874518759bc8,
    0x3ff0b5586cf9890f,
    0x3ff0e3ec32d3d1a2,
    0x3ff11301d0125b51,
    0x3ff1429aaea92de0,
    0x3ff172b83c7d517b,
    0x3ff1a35beb6fcb75,
    0x3ff1d4873168b9aa,
    0x3ff2063b88628cd6,
    0x3ff2387a6e756238,
    0x3ff26b4565e27cdd,
    0x3ff29e9df51fdee1,
    0x3ff2d285a6e4030b,
    0x3ff306fe0a31b715,
    0x3ff33c08b26416ff,
    0x3ff371a7373aa9cb,
    0x3ff3a7db34e59ff7,
    0x3ff3dea64c123422,
    0x3ff4160a21f72e2a,
    0x3ff44e086061892d,
    0x3ff486a2b5c13cd0,
    0x3ff4bfdad5362a27,
    0x3ff4f9b2769d2ca7,
    0x3ff5342b569d4f82,
    0x3ff56f4736b527da,
    0x3ff5ab07dd485429,
    0x3ff5e76f15ad2148,
    0x3ff6247eb03a5585,
    0x3ff6623882552225,
    0x3ff6a09e667f3bcd,
    0x3ff6dfb23c651a2f,
    0x3ff71f75e8ec5f74,
    0x3ff75feb564267c9,
    0x3ff7a11473eb0187,
    0x3ff7e2f336cf4e62,
    0x3ff82589994cce13,
    0x3ff868d99b4492ed,
    0x3ff8ace5422aa0db,
    0x3ff8f1ae99157736,
    0x3ff93737b0cdc5e5,
    0x3ff97d829fde4e50,
    0x3ff9c49182a3f090,
    0x3ffa0c667b5de565,
    0x3ffa5503b23e255d,
    0x3ffa9e6b5579fdbf,
    0x3ffae89f995ad3ad,
    0x3ffb33a2b84f15fb,
    0x3ffb7f76f2fb5e47,
    0x3ffbcc1e904bc1d2,
    0x3ffc199bdd85529c,
    0x3ffc67f12e57d14b,
    0x3ffcb720dcef9069,
    0x3ffd072d4a07897c,
    0x3ffd5818dcfba487,
    0x3ffda9e603db3285,
    0x3ffdfc97337b9b5f,
    0x3ffe502ee78b3ff6,
    0x3ffea4afa2a490da,
    0x3ffefa1bee615a27,
    0x3fff50765b6e4540,
    0x3fffa7c1819e90d8,
];

impl TokenDist {
    /// Validates `config`, naming fields under `path` (e.g. `workload.prompt_tokens`).
    pub fn from_config(config: &DistConfig, path: &str) -> Result<TokenDist, ConfigError> {
        let field = |name: &str| format!("{path}.{name}");
        let allowed: &[&str] = match config.dist {
            DistKind::Fixed => &["value"],
            DistKind::Uniform => &["min", "max"],
            DistKind::Geometric => &["mean", "max"],
            DistKind::Lognormal => &["mean", "sigma", "max"],
        };
        let present = [
            ("value", config.value.is_some()),
            ("min", config.min.is_some()),
            ("max", config.max.is_some()),
            ("mean", config.mean.is_some()),
            ("sigma", config.sigma.is_some()),
        ];
        for (name, is_set) in present {
            if is_set && !allowed.contains(&name) {
                return Err(ConfigError::new(
                    field(name),
                    format!("does not apply to dist \"{}\" (it takes {})", kind_name(config.dist), allowed.join(", ")),
                ));
            }
        }
        let count = |name: &str, v: Option<u64>| -> Result<u32, ConfigError> {
            let v = v.ok_or_else(|| {
                ConfigError::new(field(name), format!("is required for dist \"{}\"", kind_name(config.dist)))
            })?;
            if !(1..=MAX_TOKENS).contains(&v) {
                return Err(ConfigError::new(field(name), format!("must be from 1 to {MAX_TOKENS} tokens, got {v}")));
            }
            Ok(v as u32)
        };
        let cap = |v: Option<u64>| -> Result<(u32, bool), ConfigError> {
            match v {
                Some(_) => Ok((count("max", v)?, true)),
                None => Ok((MAX_TOKENS as u32, false)),
            }
        };
        let mean = |v: Option<f64>| -> Result<f64, ConfigError> {
            let v = v.ok_or_else(|| {
                ConfigError::new(field("mean"), format!("is required for dist \"{}\"", kind_name(config.dist)))
            })?;
            if !v.is_finite() || !(1.0..=MAX_TOKENS as f64).contains(&v) {
                return Err(ConfigError::new(field("mean"), format!("must be from 1 to {MAX_TOKENS} tokens, got {v}")));
            }
            Ok(v)
        };
        Ok(match config.dist {
            DistKind::Fixed => TokenDist::Fixed(count("value", config.value)?),
            DistKind::Uniform => {
                let (min, max) = (count("min", config.min)?, count("max", config.max)?);
                if min > max {
                    return Err(ConfigError::new(field("max"), format!("must be at least min ({min}), got {max}")));
                }
                TokenDist::Uniform { min, max }
            }
            DistKind::Geometric => {
                let mean = mean(config.mean)?;
                let (max, capped) = cap(config.max)?;
                let ln_q = libm::log1p(-1.0 / mean);
                TokenDist::Geometric { ln_q, mean, max, capped }
            }
            DistKind::Lognormal => {
                let mean = mean(config.mean)?;
                let sigma = config.sigma.ok_or_else(|| {
                    ConfigError::new(field("sigma"), "is required for dist \"lognormal\"".to_string())
                })?;
                if !sigma.is_finite() || !(0.0..=3.0).contains(&sigma) {
                    return Err(ConfigError::new(field("sigma"), format!("must be from 0 to 3, got {sigma}")));
                }
                let (max, capped) = cap(config.max)?;
                // Choose mu so that the continuous distribution has the requested mean.
                let mu = libm::log(mean) - sigma * sigma / 2.0;
                let dist = LogNormal { mu, sigma };
                TokenDist::Lognormal { dist, mean, max, capped }
            }
        })
    }

    /// The output length a request is cut off at, as vLLM's `max_tokens`: a fixed length (as a
    /// benchmark's `--ignore-eos` requests have) or a geometric or lognormal draw's cap. `None`
    /// where every length is the request's own end (uniform, a joint table).
    pub fn max_tokens(&self) -> Option<u32> {
        match self {
            TokenDist::Fixed(v) => Some(*v),
            TokenDist::Geometric { max, .. } | TokenDist::Lognormal { max, .. } => Some(*max),
            TokenDist::Uniform { .. } => None,
            #[cfg(feature = "empirical")]
            TokenDist::Joint { .. } => None,
        }
    }

    /// Draws one token count.
    pub fn sample(&self, stream: &mut Stream) -> u32 {
        match self {
            TokenDist::Fixed(v) => *v,
            TokenDist::Uniform { min, max } => stream.integer(*min, *max),
            TokenDist::Geometric { ln_q, max, .. } => {
                // ln(1 - u) / ln(1 - p), both <= 0. `1 - u` is exact for the generator's
                // uniforms (multiples of 2^-53), so `log` gives what `log1p(-u)` would, faster.
                geometric_count(libm::log(1.0 - stream.uniform()) / ln_q, *max)
            }
            TokenDist::Lognormal { dist, max, .. } => rounded_count(exp_for_count(dist.log_sample(stream)), *max),
            #[cfg(feature = "empirical")]
            TokenDist::Joint { table, column, .. } => table.sample(stream)[*column],
        }
    }

    /// The largest value it can produce, when the config bounds it.
    pub fn bound(&self) -> Option<u32> {
        match self {
            TokenDist::Fixed(v) => Some(*v),
            TokenDist::Uniform { max, .. } => Some(*max),
            TokenDist::Geometric { max, capped, .. } | TokenDist::Lognormal { max, capped, .. } => {
                capped.then_some(*max)
            }
            #[cfg(feature = "empirical")]
            TokenDist::Joint { max, .. } => Some(*max),
        }
    }

    /// The largest value it can ever produce.
    pub fn max_value(&self) -> u32 {
        self.bound().unwrap_or(MAX_TOKENS as u32)
    }

    /// The nominal mean square `E[X^2]` (before rounding and capping): what a size-biased mean
    /// needs, since a request holds its seat in proportion to its output length.
    pub fn mean_square(&self) -> f64 {
        match self {
            TokenDist::Fixed(v) => (*v as f64) * (*v as f64),
            TokenDist::Uniform { min, max } => {
                let (a, b) = (*min as f64, *max as f64);
                (a * a + a * b + b * b) / 3.0
            }
            // One token plus failures of a geometric with p = 1 / mean: E[X^2] = m (2m - 1).
            TokenDist::Geometric { mean, .. } => mean * (2.0 * mean - 1.0),
            TokenDist::Lognormal { dist, .. } => libm::exp(2.0 * dist.mu + 2.0 * dist.sigma * dist.sigma),
            #[cfg(feature = "empirical")]
            TokenDist::Joint { mean_square, .. } => *mean_square,
        }
    }

    /// The nominal mean (before rounding and capping).
    pub fn mean(&self) -> f64 {
        match self {
            TokenDist::Fixed(v) => *v as f64,
            TokenDist::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
            TokenDist::Geometric { mean, .. } | TokenDist::Lognormal { mean, .. } => *mean,
            #[cfg(feature = "empirical")]
            TokenDist::Joint { mean, .. } => *mean,
        }
    }
}

fn kind_name(kind: DistKind) -> &'static str {
    match kind {
        DistKind::Fixed => "fixed",
        DistKind::Uniform => "uniform",
        DistKind::Geometric => "geometric",
        DistKind::Lognormal => "lognormal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_cast_equal_the_library_floor_and_round() {
        let by_floor = |f: f64, max: u32| (f.floor() + 1.0).min(f64::from(max)) as u32;
        let by_round = |v: f64, max: u32| v.round().clamp(1.0, f64::from(max)) as u32;
        let mut values = vec![0.0, -0.0, 0.5, 0.49999999999999994, 1.5, 2.5, 1e-300, f64::INFINITY, 4e9, 1e300];
        for k in 0..2000u32 {
            let k = f64::from(k);
            values.extend([k, k + 0.5, k - 0.5, k + 0.25, (k + 0.5).next_down(), (k + 0.5).next_up(), k.next_down()]);
        }
        for max in [1, 2, 7, 1000, MAX_TOKENS as u32] {
            for &v in values.iter().filter(|v| **v >= 0.0) {
                assert_eq!(geometric_count(v, max), by_floor(v, max), "floor of {v:e}, max {max}");
                assert_eq!(rounded_count(v, max), by_round(v, max), "round of {v:e}, max {max}");
            }
        }
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn exp_for_count_gives_libm_s_counts() {
        // The table: each entry the double nearest 2^(j/64) (libm's exp2 is within an ulp).
        for (j, &bits) in EXP2_64THS.iter().enumerate() {
            let (t, e) = (f64::from_bits(bits), libm::exp2(j as f64 / 64.0));
            assert!((t - e).abs() <= e * f64::EPSILON, "2^({j}/64): {t:e} against {e:e}");
        }
        let mut stream = Stream::new(3);
        let mut xs: Vec<f64> = (0..2_000_000).map(|_| 40.0 * stream.uniform() - 20.0).collect();
        // Right at the halves, where a count turns: the logarithm of each and its neighbours.
        for m in 0..200_000u32 {
            let x = libm::log(f64::from(m) + 0.5);
            xs.extend([x, x.next_up(), x.next_down(), x + 1e-12, x - 1e-12, x + 1e-10, x - 1e-10]);
        }
        let mut from_table = 0;
        for &x in &xs {
            let (fast, exact) = (exp_for_count(x), libm::exp(x));
            assert!((fast - exact).abs() <= 4e-11 * exact, "exp({x:e}): {fast:e} against {exact:e}");
            for max in [7, 1000, MAX_TOKENS as u32] {
                assert_eq!(rounded_count(fast, max), rounded_count(exact, max), "exp({x:e}), max {max}");
            }
            from_table += usize::from(fast != exact);
        }
        // Most come from the table (else this would test only libm against itself).
        assert!(from_table > xs.len() / 2, "{from_table} of {} from the table", xs.len());
    }

    fn sample_mean(dist: &DistConfig, n: usize) -> f64 {
        let d = TokenDist::from_config(dist, "x").unwrap();
        let mut stream = Stream::new(7);
        (0..n).map(|_| d.sample(&mut stream) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match_the_configured_means() {
        let rows: &[(DistConfig, f64, f64)] = &[
            (DistConfig::fixed(200), 200.0, 0.0),
            (DistConfig::uniform(1, 400), 200.5, 0.01),
            (DistConfig::geometric(100.0), 100.0, 0.02),
            (DistConfig::geometric(1.0), 1.0, 0.0),
            (DistConfig::lognormal(300.0, 0.8, None), 300.0, 0.02),
        ];
        for (dist, expected, tol) in rows {
            let m = sample_mean(dist, 200_000);
            assert!((m - expected).abs() <= expected * tol + 1e-9, "{dist:?}: mean {m}, expected {expected}");
        }
    }

    /// The geometric draw takes `log(1 - u)` and truncates, where it took `log1p(-u)` and the
    /// floor: the same lengths, so every run that draws them is unchanged.
    #[test]
    fn geometric_draws_are_those_of_log1p_and_the_floor() {
        for (mean, max) in [(100.0, 1_000_000u32), (2.5, 50), (1.0, 1_000_000), (4000.0, 8192), (250_000.0, 1_000_000)]
        {
            let d =
                TokenDist::from_config(&DistConfig { max: Some(u64::from(max)), ..DistConfig::geometric(mean) }, "x")
                    .unwrap();
            let TokenDist::Geometric { ln_q, .. } = d else { unreachable!() };
            let (mut a, mut b) = (Stream::new(3), Stream::new(3));
            for _ in 0..1_000_000 {
                let u = b.uniform();
                let old = (libm::log1p(-u) / ln_q).floor() + 1.0;
                assert_eq!(d.sample(&mut a), old.min(max as f64) as u32, "mean {mean}, u {u}");
            }
        }
    }

    #[test]
    fn caps_and_floors_hold() {
        let d = TokenDist::from_config(&DistConfig::lognormal(50.0, 2.0, Some(120)), "x").unwrap();
        let mut stream = Stream::new(1);
        for _ in 0..100_000 {
            let v = d.sample(&mut stream);
            assert!((1..=120).contains(&v), "{v}");
        }
        assert_eq!(d.bound(), Some(120));
        let g = TokenDist::from_config(&DistConfig::geometric(10.0), "x").unwrap();
        assert_eq!(g.bound(), None);
    }
}

//! Traffic that changes over time: an open load's rate at time `t` is its base rate times
//! [`Traffic::factor`]`(t)`. Arrivals are drawn by thinning (Lewis and Shedler): candidates come
//! at the highest rate the curve reaches, with Poisson or gamma gaps as the load asks, and each
//! is kept with probability `factor(t) / max factor`. For Poisson candidates that is exactly a
//! Poisson process of the curve's rate; gamma candidates keep their burstiness, thinned.

use serde::{Deserialize, Serialize};

#[cfg(feature = "traffic")]
use crate::error::ConfigError;

/// The largest factor a curve may reach: the load's own cap on the rate applies to the base.
pub const MAX_FACTOR: f64 = 100.0;
/// The longest time a curve may name, in seconds (a year).
pub const MAX_TIME_S: f64 = 365.0 * 86_400.0;

/// The shape of a rate over time, between a low and a high level: a replica's `load.traffic`
/// (low 1 and high `factor`, or a day from `trough` to 1: multiples of its base rate) and a
/// fleet's `traffic` (`base_rps` to `peak_rps`) both draw it with [`Curve::at`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrafficShape {
    /// The low level throughout.
    #[default]
    Constant,
    /// The low level, then the high one from `at_s` on.
    Step,
    /// The low level, then a straight line to the high one, reached `duration_s` after `at_s`.
    Ramp,
    /// A day: the low level (the trough) at its start and end, the high one half a period in.
    Diurnal,
    /// The high level for `duration_s` from `at_s`, the low one otherwise.
    Spike,
}

/// A shape drawn between two levels: the one rate curve of the replica's traffic and the fleet's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curve {
    /// Its shape.
    pub shape: TrafficShape,
    /// The level outside the step, ramp or spike, and the day's trough.
    pub low: f64,
    /// The step's, the spike's and the day's peak level, and where the ramp ends.
    pub high: f64,
    /// When the step, ramp or spike starts, in seconds.
    pub at_s: f64,
    /// How long the ramp rises or the spike lasts, in seconds.
    pub duration_s: f64,
    /// One day, from trough to trough, in seconds.
    pub period_s: f64,
}

impl Curve {
    /// The level at `t_s`.
    pub fn at(&self, t_s: f64) -> f64 {
        let (low, high) = (self.low, self.high);
        match self.shape {
            TrafficShape::Constant => low,
            TrafficShape::Step => {
                if t_s < self.at_s {
                    low
                } else {
                    high
                }
            }
            TrafficShape::Ramp => low + (high - low) * ((t_s - self.at_s) / self.duration_s).clamp(0.0, 1.0),
            TrafficShape::Diurnal => {
                let phase = std::f64::consts::TAU * (t_s / self.period_s);
                low + (high - low) * (1.0 - libm::cos(phase)) / 2.0
            }
            TrafficShape::Spike => {
                if (self.at_s..self.at_s + self.duration_s).contains(&t_s) {
                    high
                } else {
                    low
                }
            }
        }
    }

    /// The highest level the curve reaches.
    pub fn highest(&self) -> f64 {
        match self.shape {
            TrafficShape::Constant => self.low,
            _ => self.low.max(self.high),
        }
    }
}

/// How an open load's rate changes over time: the rate at time `t` is the base rate times a
/// factor that this shape gives. Fields that do not belong to `shape` are rejected.
#[cfg(feature = "traffic")]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficConfig {
    /// `constant`, `step`, `ramp`, `diurnal` or `spike`.
    pub shape: TrafficShape,
    /// Step, ramp, spike: when the change starts, in seconds from the start of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
    /// Ramp: how long it takes to reach `factor`; spike: how long the spike lasts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Step, ramp, spike: the factor it goes to (2 = twice the base rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    /// Diurnal: the length of one day, from trough to trough (a compressed day is shorter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_s: Option<f64>,
    /// Diurnal: the factor at the trough (the peak, half a period in, is 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trough: Option<f64>,
}

/// A validated traffic curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Traffic {
    /// Factor 1 throughout.
    Constant,
    /// 1, then `factor` from `at_s`.
    Step {
        /// When it steps.
        at_s: f64,
        /// To what.
        factor: f64,
    },
    /// 1 until `at_s`, then linearly to `factor` at `at_s + duration_s`, then `factor`.
    Ramp {
        /// When it starts.
        at_s: f64,
        /// How long it takes.
        duration_s: f64,
        /// Where it ends.
        factor: f64,
    },
    /// `trough + (1 - trough) (1 - cos(2 pi t / period)) / 2`: the trough at 0, 1 at half a period.
    Diurnal {
        /// One day.
        period_s: f64,
        /// The factor at the trough.
        trough: f64,
    },
    /// `factor` on `[at_s, at_s + duration_s)`, 1 otherwise.
    Spike {
        /// When it starts.
        at_s: f64,
        /// How long it lasts.
        duration_s: f64,
        /// How high.
        factor: f64,
    },
}

impl Traffic {
    /// Validates `config` (its fields named under `path`, e.g. `load.traffic.factor`).
    #[cfg(feature = "traffic")]
    pub fn from_config(config: &TrafficConfig, path: &str) -> Result<Traffic, ConfigError> {
        let TrafficConfig { shape, at_s, duration_s, factor, period_s, trough } = *config;
        let name = |field: &str| format!("{path}.{field}");
        let word = match shape {
            TrafficShape::Constant => "constant",
            TrafficShape::Step => "step",
            TrafficShape::Ramp => "ramp",
            TrafficShape::Diurnal => "diurnal",
            TrafficShape::Spike => "spike",
        };
        let takes: &[&str] = match shape {
            TrafficShape::Constant => &[],
            TrafficShape::Step => &["at_s", "factor"],
            TrafficShape::Ramp | TrafficShape::Spike => &["at_s", "duration_s", "factor"],
            TrafficShape::Diurnal => &["period_s", "trough"],
        };
        for (field, given) in
            [("at_s", at_s), ("duration_s", duration_s), ("factor", factor), ("period_s", period_s), ("trough", trough)]
        {
            match (given, takes.contains(&field)) {
                (Some(_), false) => {
                    return Err(ConfigError::new(name(field), format!("is not used by shape \"{word}\"; remove it")));
                }
                (None, true) => {
                    return Err(ConfigError::new(name(field), format!("is required for shape \"{word}\"")));
                }
                _ => {}
            }
        }
        let time = |field: &str, v: Option<f64>, min: f64| -> Result<f64, ConfigError> {
            let v = v.unwrap_or(0.0);
            if v.is_finite() && v >= min && v <= MAX_TIME_S && (min == 0.0 || v > 0.0) {
                Ok(v)
            } else {
                let rule = if min == 0.0 { "from 0" } else { "above 0 and at most" };
                Err(ConfigError::new(name(field), format!("must be {rule} {MAX_TIME_S} seconds, got {v}")))
            }
        };
        let factor_of = |v: Option<f64>| -> Result<f64, ConfigError> {
            let v = v.unwrap_or(1.0);
            if v.is_finite() && (0.0..=MAX_FACTOR).contains(&v) {
                Ok(v)
            } else {
                Err(ConfigError::new(
                    name("factor"),
                    format!("must be from 0 to {MAX_FACTOR} (a multiple of the base rate), got {v}"),
                ))
            }
        };
        Ok(match shape {
            TrafficShape::Constant => Traffic::Constant,
            TrafficShape::Step => Traffic::Step { at_s: time("at_s", at_s, 0.0)?, factor: factor_of(factor)? },
            TrafficShape::Ramp => Traffic::Ramp {
                at_s: time("at_s", at_s, 0.0)?,
                duration_s: time("duration_s", duration_s, f64::MIN_POSITIVE)?,
                factor: factor_of(factor)?,
            },
            TrafficShape::Spike => Traffic::Spike {
                at_s: time("at_s", at_s, 0.0)?,
                duration_s: time("duration_s", duration_s, f64::MIN_POSITIVE)?,
                factor: factor_of(factor)?,
            },
            TrafficShape::Diurnal => {
                let trough = trough.unwrap_or(1.0);
                if !(trough.is_finite() && (0.0..=1.0).contains(&trough)) {
                    return Err(ConfigError::new(
                        name("trough"),
                        format!("must be from 0 to 1 (the peak's factor is 1), got {trough}"),
                    ));
                }
                Traffic::Diurnal { period_s: time("period_s", period_s, f64::MIN_POSITIVE)?, trough }
            }
        })
    }

    /// The curve of factors this draws: from 1 to `factor`, or a day from `trough` to 1.
    pub fn curve(&self) -> Curve {
        let flat =
            Curve { shape: TrafficShape::Constant, low: 1.0, high: 1.0, at_s: 0.0, duration_s: 0.0, period_s: 0.0 };
        match *self {
            Traffic::Constant => flat,
            Traffic::Step { at_s, factor } => Curve { shape: TrafficShape::Step, high: factor, at_s, ..flat },
            Traffic::Ramp { at_s, duration_s, factor } => {
                Curve { shape: TrafficShape::Ramp, high: factor, at_s, duration_s, ..flat }
            }
            Traffic::Diurnal { period_s, trough } => {
                Curve { shape: TrafficShape::Diurnal, low: trough, period_s, ..flat }
            }
            Traffic::Spike { at_s, duration_s, factor } => {
                Curve { shape: TrafficShape::Spike, high: factor, at_s, duration_s, ..flat }
            }
        }
    }

    /// The factor at time `t_s`.
    pub fn factor(&self, t_s: f64) -> f64 {
        self.curve().at(t_s)
    }

    /// The highest factor the curve reaches: the candidates' rate is the base rate times this.
    pub fn max_factor(&self) -> f64 {
        self.curve().highest()
    }

    /// The mean factor over `[from_s, to_s]`, by the trapezoid rule on a fine grid (for reports:
    /// the rate a run offered over its measured window).
    pub fn mean_factor(&self, from_s: f64, to_s: f64) -> f64 {
        if from_s.is_nan() || to_s.is_nan() || to_s <= from_s {
            return self.factor(from_s);
        }
        const N: u32 = 10_000;
        let h = (to_s - from_s) / f64::from(N);
        let inner: f64 = (1..N).map(|i| self.factor(from_s + f64::from(i) * h)).sum();
        (inner + (self.factor(from_s) + self.factor(to_s)) / 2.0) / f64::from(N)
    }

    /// The curve in a few words, for messages.
    pub fn describe(&self) -> String {
        match *self {
            Traffic::Constant => "constant".into(),
            Traffic::Step { at_s, factor } => format!("a step to {factor}x at {at_s} s"),
            Traffic::Ramp { at_s, duration_s, factor } => {
                format!("a ramp to {factor}x from {at_s} s over {duration_s} s")
            }
            Traffic::Diurnal { period_s, trough } => format!("a {period_s} s day, its trough at {trough}x"),
            Traffic::Spike { at_s, duration_s, factor } => format!("a {factor}x spike at {at_s} s for {duration_s} s"),
        }
    }
}

#[cfg(all(test, feature = "traffic"))]
mod tests {
    use super::*;

    fn config(shape: TrafficShape) -> TrafficConfig {
        TrafficConfig { shape, ..TrafficConfig::default() }
    }

    #[test]
    fn factors_at_a_few_times() {
        let step = Traffic::Step { at_s: 10.0, factor: 3.0 };
        assert_eq!((step.factor(9.9), step.factor(10.0), step.max_factor()), (1.0, 3.0, 3.0));
        let ramp = Traffic::Ramp { at_s: 10.0, duration_s: 20.0, factor: 0.5 };
        assert_eq!((ramp.factor(0.0), ramp.factor(20.0), ramp.factor(99.0), ramp.max_factor()), (1.0, 0.75, 0.5, 1.0));
        let day = Traffic::Diurnal { period_s: 100.0, trough: 0.2 };
        assert!((day.factor(0.0) - 0.2).abs() < 1e-12 && (day.factor(50.0) - 1.0).abs() < 1e-12);
        assert!((day.mean_factor(0.0, 100.0) - 0.6).abs() < 1e-6, "{}", day.mean_factor(0.0, 100.0));
        assert!((day.mean_factor(0.0, 50.0) - 0.6).abs() < 1e-6 && (step.mean_factor(0.0, 20.0) - 2.0).abs() < 1e-3);
        let spike = Traffic::Spike { at_s: 5.0, duration_s: 2.0, factor: 4.0 };
        assert_eq!((spike.factor(4.9), spike.factor(5.0), spike.factor(7.0)), (1.0, 4.0, 1.0));
    }

    #[test]
    fn one_curve_draws_a_shape_between_two_levels() {
        let curve = |shape| Curve { shape, low: 10.0, high: 40.0, at_s: 100.0, duration_s: 50.0, period_s: 1000.0 };
        let at = |shape, t| curve(shape).at(t);
        assert_eq!((at(TrafficShape::Constant, 500.0), curve(TrafficShape::Constant).highest()), (10.0, 10.0));
        assert_eq!((at(TrafficShape::Step, 99.0), at(TrafficShape::Step, 100.0)), (10.0, 40.0));
        assert_eq!(
            (at(TrafficShape::Ramp, 100.0), at(TrafficShape::Ramp, 125.0), at(TrafficShape::Ramp, 1e6)),
            (10.0, 25.0, 40.0)
        );
        assert_eq!((at(TrafficShape::Spike, 100.0), at(TrafficShape::Spike, 150.0)), (40.0, 10.0));
        assert_eq!((at(TrafficShape::Diurnal, 0.0), at(TrafficShape::Diurnal, 500.0)), (10.0, 40.0));
        assert_eq!(curve(TrafficShape::Diurnal).highest(), 40.0);
        // Both configs write a shape by the same name.
        for (shape, name) in
            [(TrafficShape::Constant, "constant"), (TrafficShape::Diurnal, "diurnal"), (TrafficShape::Spike, "spike")]
        {
            assert_eq!(serde_json::to_string(&shape).unwrap(), format!("\"{name}\""));
        }
    }

    #[test]
    fn each_bad_field_is_named() {
        let path = "load.traffic";
        let rows: &[(TrafficConfig, &str, &str)] = &[
            (config(TrafficShape::Step), "load.traffic.at_s", "is required for shape \"step\""),
            (TrafficConfig { at_s: Some(1.0), ..config(TrafficShape::Step) }, "load.traffic.factor", "is required"),
            (
                TrafficConfig { at_s: Some(1.0), factor: Some(1e9), ..config(TrafficShape::Step) },
                "load.traffic.factor",
                "must be from 0 to 100",
            ),
            (
                TrafficConfig { at_s: Some(-1.0), factor: Some(2.0), ..config(TrafficShape::Step) },
                "load.traffic.at_s",
                "must be from 0",
            ),
            (
                TrafficConfig {
                    at_s: Some(0.0),
                    factor: Some(2.0),
                    duration_s: Some(0.0),
                    ..config(TrafficShape::Spike)
                },
                "load.traffic.duration_s",
                "must be above 0",
            ),
            (
                TrafficConfig { period_s: Some(60.0), trough: Some(1.5), ..config(TrafficShape::Diurnal) },
                "load.traffic.trough",
                "must be from 0 to 1",
            ),
            (
                TrafficConfig { period_s: Some(f64::NAN), trough: Some(0.5), ..config(TrafficShape::Diurnal) },
                "load.traffic.period_s",
                "must be above 0",
            ),
            (
                TrafficConfig { period_s: Some(60.0), ..config(TrafficShape::Constant) },
                "load.traffic.period_s",
                "is not used by shape \"constant\"",
            ),
        ];
        for (c, field, said) in rows {
            let e = Traffic::from_config(c, path).unwrap_err();
            assert_eq!(e.path, *field, "{c:?}");
            assert!(e.message.contains(said), "{c:?}: {e}");
        }
        let ok = TrafficConfig { period_s: Some(600.0), trough: Some(0.25), ..config(TrafficShape::Diurnal) };
        assert_eq!(Traffic::from_config(&ok, path).unwrap(), Traffic::Diurnal { period_s: 600.0, trough: 0.25 });
    }
}

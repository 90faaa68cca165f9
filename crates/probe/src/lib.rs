//! A vLLM replica read from its `/metrics`, for `kneelab probe` and the page's "paste your
//! scrapes": [`parse`] reads one Prometheus text into vLLM's metrics per `model_name`, and
//! [`analyse`] turns a window of scrapes into rates, quantiles from histogram bucket increases
//! (computed as Prometheus's `histogram_quantile` computes them), gauge trends and Little's Law.
//!
//! Pure: no clock, no network. The caller scrapes and says when.
//!
//! ```
//! use kneelab_probe::{Sample, analyse, parse};
//! let at = |requests: f64, t_s: f64| Sample {
//!     t_s,
//!     scrape: parse(&format!(
//!         "# TYPE vllm:request_success_total counter\n\
//!          vllm:request_success_total{{model_name=\"m\",finished_reason=\"stop\"}} {requests}\n"
//!     ))
//!     .unwrap(),
//! };
//! let report = analyse(&[at(100.0, 0.0), at(400.0, 60.0)], "m");
//! assert_eq!(report.request_rate_rps, Some(5.0));
//! ```
#![warn(missing_docs)]

pub mod on_knee;
pub mod placement;
pub mod scrape;
pub mod window;

/// Prometheus's `histogram_quantile`, kept in kneelab-sim so the page's simulated /metrics
/// panel reads its own scrape with the very function `kneelab probe` reads a real one with.
pub use kneelab_sim::quantile::{Quantile, histogram_quantile};
pub use on_knee::{OnKnee, check_peak, limit_words, on_knee};
pub use placement::{CurvePoint, Placement, Zone, place};
pub use scrape::{Counter, Gauge, Hist, Histogram, Model, Scrape, ScrapeError, parse};
pub use window::{GaugeStats, Latency, Law, Report, Sample, Trend, analyse, analyse_all, models};

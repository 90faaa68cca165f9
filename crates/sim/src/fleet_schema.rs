//! The fleet lab's settings, stated once: the day the page plays, the routers and autoscaler
//! signals with what the page calls them, each signal's thresholds, and the ranges its controls
//! offer. The page's `fleetSchema()` is [`fleet_schema`] as it serialises; `tests/fleet.rs`
//! runs the same day, so what the lesson says about it is checked under the settings a reader
//! starts from.

use serde::Serialize;

use crate::config::{SloConfig, WorkloadConfig};
use crate::fleet::{
    AutoscalerConfig, FleetConfig, FleetRunConfig, MAX_COLD_START_S, MAX_REPLICAS, Router, RouterConfig, Signal,
    TrafficConfig,
};
use crate::schema::CHAT;
use crate::sweep::DEFAULT_ATTAINMENT_TARGET;
use crate::traffic::TrafficShape;

/// A router as the page offers it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RouterInfo {
    /// Its name in configs (`router.policy`).
    pub name: Router,
    /// What the page calls it.
    pub label: &'static str,
}

/// An autoscaler signal as the page offers it, with thresholds that make sense in its unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SignalInfo {
    /// Its name in configs (`autoscaler.signal`).
    pub name: Signal,
    /// What the page calls it.
    pub label: &'static str,
    /// The unit of its thresholds, as the page writes it.
    pub unit: &'static str,
    /// Scale up above this (the page's starting value for the signal).
    pub scale_up: f64,
    /// Drain below this.
    pub scale_down: f64,
    /// The largest threshold the core accepts for it.
    pub max: f64,
    /// The step of a threshold control.
    pub step: f64,
}

/// A control's range.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Range {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Step of the control.
    pub step: f64,
}

/// Everything the fleet lab's page needs to know, for `fleetSchema()`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetSchema {
    /// The day a lab starts from: every field the page does not offer keeps this value.
    pub defaults: FleetConfig,
    /// The routers, in the order the page lists them.
    pub routers: Vec<RouterInfo>,
    /// The signals, in the order the page lists them; `none` last.
    pub signals: Vec<SignalInfo>,
    /// Cold start, in minutes (the config's `autoscaler.cold_start_s` ÷ 60).
    pub cold_start_min: Range,
    /// Fewest and most replicas.
    pub replicas: Range,
    /// The share of requests that must meet both SLOs for a run to "meet the SLO".
    pub attainment_target: f64,
}

/// Every router, with its label.
pub const ROUTERS: [RouterInfo; 6] = [
    RouterInfo { name: Router::LeastOutstanding, label: "Least outstanding requests" },
    RouterInfo { name: Router::LeastWaiting, label: "Least waiting" },
    RouterInfo { name: Router::PowerOfTwo, label: "Power of two choices" },
    RouterInfo { name: Router::LeastKv, label: "Least KV cache in use" },
    RouterInfo { name: Router::RoundRobin, label: "Round-robin" },
    RouterInfo { name: Router::Random, label: "Random" },
];

const fn signal(name: Signal, label: &'static str, unit: &'static str, up: f64, down: f64, step: f64) -> SignalInfo {
    SignalInfo { name, label, unit, scale_up: up, scale_down: down, max: 0.0, step }
}

/// Every signal with its starting thresholds (`max` is filled from the core's rule).
const SIGNALS: [SignalInfo; 7] = [
    signal(Signal::WaitingMean, "num_requests_waiting per replica (mean)", "requests", 1.0, 0.1, 0.1),
    signal(Signal::WaitingMax, "num_requests_waiting (max of any replica)", "requests", 8.0, 1.0, 1.0),
    signal(Signal::TtftP99, "TTFT p99 over the window", "s", 0.4, 0.1, 0.05),
    signal(Signal::KvUsage, "KV-cache usage (mean)", "share", 0.05, 0.01, 0.01),
    signal(Signal::GpuUtil, "GPU utilisation (replicas busy)", "share", 0.9, 0.5, 0.01),
    signal(Signal::Rate, "Request rate ÷ capacity (Little's Law)", "share", 0.6, 0.3, 0.05),
    signal(Signal::None, "None: a fixed fleet", "", 1.0, 0.0, 0.1),
];

/// The signals, in the page's order, with their largest thresholds.
pub fn signals() -> Vec<SignalInfo> {
    SIGNALS.iter().map(|s| SignalInfo { max: s.name.threshold_max(), ..*s }).collect()
}

/// The page's day: an hour of chat traffic that steps from 20 to 45 req/s for ten minutes (a
/// replica serves about 14), two replicas to start, scaling on the waiting queue.
pub fn lab_day() -> FleetConfig {
    let waiting = SIGNALS[0];
    FleetConfig {
        workload: WorkloadConfig::preset(CHAT.preset),
        slo: SloConfig { ttft_ms: CHAT.slo_ttft_ms, tpot_ms: CHAT.slo_tpot_ms, ..SloConfig::default() },
        traffic: TrafficConfig {
            shape: TrafficShape::Spike,
            base_rps: 20.0,
            peak_rps: 45.0,
            at_s: 1_500.0,
            duration_s: 600.0,
            ..TrafficConfig::default()
        },
        router: RouterConfig { policy: Router::LeastOutstanding },
        autoscaler: AutoscalerConfig {
            signal: waiting.name,
            scale_up: waiting.scale_up,
            scale_down: waiting.scale_down,
            min_replicas: 2,
            max_replicas: 16,
            cold_start_s: 120.0,
            ..AutoscalerConfig::default()
        },
        run: FleetRunConfig { duration_s: 3_600.0, ..FleetRunConfig::default() },
        ..FleetConfig::default()
    }
}

/// The fleet lab's schema.
pub fn fleet_schema() -> FleetSchema {
    FleetSchema {
        defaults: lab_day(),
        routers: ROUTERS.to_vec(),
        signals: signals(),
        cold_start_min: Range { min: 0.0, max: MAX_COLD_START_S / 60.0, step: 0.5 },
        replicas: Range { min: 1.0, max: f64::from(MAX_REPLICAS), step: 1.0 },
        attainment_target: DEFAULT_ATTAINMENT_TARGET,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_day_and_every_signal_s_thresholds_are_valid() {
        for s in signals() {
            let mut day = lab_day();
            day.autoscaler.signal = s.name;
            day.autoscaler.scale_up = s.scale_up;
            day.autoscaler.scale_down = s.scale_down;
            assert!(day.validate().is_ok(), "{:?}", s.name);
            assert!(s.scale_up <= s.max && s.scale_down < s.scale_up);
        }
        let mut routers: Vec<_> = ROUTERS.iter().map(|r| format!("{:?}", r.name)).collect();
        routers.dedup();
        assert_eq!(routers.len(), 6);
    }
}

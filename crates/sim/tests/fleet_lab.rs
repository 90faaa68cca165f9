//! The fleet section's claims, on the day its lab starts from (`fleet_schema::lab_day`): what
//! the page says about signals and cold starts holds there, with the thresholds it offers.

use kneelab_sim::fleet::{FleetConfig, FleetTotals, Signal, run_fleet};
use kneelab_sim::fleet_schema::{fleet_schema, lab_day, signals};

fn with_signal(signal: Signal) -> FleetConfig {
    let info = signals().into_iter().find(|s| s.name == signal).expect("the schema offers every signal");
    let mut day = lab_day();
    day.autoscaler.signal = signal;
    day.autoscaler.scale_up = info.scale_up;
    day.autoscaler.scale_down = info.scale_down;
    day
}

fn totals(c: &FleetConfig) -> FleetTotals {
    run_fleet(c).expect("the lab's day runs").totals
}

#[test]
fn gpu_utilisation_pays_for_replicas_the_waiting_queue_does_not_need() {
    let target = fleet_schema().attainment_target;
    let gpu = totals(&with_signal(Signal::GpuUtil));
    let waiting = totals(&with_signal(Signal::WaitingMean));
    // Busy reads high far below the knee: the fleet grows to its maximum and stays there.
    assert_eq!(gpu.peak_replicas, lab_day().autoscaler.max_replicas);
    assert!(waiting.gpu_hours < 0.6 * gpu.gpu_hours, "{} vs {}", waiting.gpu_hours, gpu.gpu_hours);
    assert!(waiting.attainment < gpu.attainment);
    assert!(waiting.attainment >= target, "{}", waiting.attainment);
    assert!(!gpu.truncated && !waiting.truncated);
}

#[test]
fn a_longer_cold_start_costs_attainment_on_the_spike() {
    let short = totals(&lab_day());
    let mut long = lab_day();
    long.autoscaler.cold_start_s = 600.0;
    let long = totals(&long);
    assert!(long.attainment < short.attainment - 0.1, "{} vs {}", long.attainment, short.attainment);
}

//! kneelab-sim: a deterministic simulation of one vLLM-like LLM serving replica.
//!
//! Requests arrive (open loop at a rate, or a closed loop of users), wait in a FCFS queue and are
//! served by continuous batching: every engine step, running requests decode one token or take a
//! prefill chunk within a token budget (`max_num_batched_tokens`), waiting requests are admitted
//! while there are seats (`max_num_seqs`) and KV cache blocks, and a full KV cache preempts the
//! newest request. A cost model turns each step's tokens and context into time. The run reports
//! what vLLM's benchmark and metrics report: TTFT, TPOT, ITL, E2E and queue time percentiles,
//! throughput, goodput, time-averaged `num_requests_running` / `num_requests_waiting`, and
//! Little's Law as measured.
//!
//! The crate reads no clock and no OS entropy and starts no threads: the same config and seed give
//! a bit-identical [`Summary`].
//!
//! ```
//! use kneelab_sim::{simulate, Config, LoadConfig, WorkloadConfig, WorkloadPreset};
//!
//! let config = Config {
//!     workload: WorkloadConfig::preset(WorkloadPreset::Rag),
//!     load: LoadConfig::open_offered(0.7),
//!     run: kneelab_sim::RunConfig { requests: 1000, warmup_requests: Some(100) },
//!     ..Config::default()
//! };
//! let summary = simulate(&config).unwrap();
//! assert_eq!(summary.requests_completed, 900);
//! assert!(summary.ttft_s.p99 >= summary.ttft_s.p50);
//! assert!(summary.goodput_rps <= summary.throughput_rps);
//! ```
#![warn(missing_docs)]

mod batch;
#[cfg(feature = "empirical")]
pub mod calibration;
pub mod capacity;
pub mod config;
pub mod cost;
pub mod dist;
mod error;
pub mod event;
pub mod exposition;
pub mod fleet;
pub mod fleet_schema;
pub mod limits;
pub mod quantile;
pub mod recorder;
pub mod sampling;
pub mod scenario;
pub mod schema;
pub mod settings;
pub mod simulation;
pub mod sizing;
pub mod stats;
pub mod summary;
pub mod sweep;
pub mod traffic;

pub use capacity::{prepare, prepare_scenario};
pub use config::{
    Config, CostConfig, CostModelKind, DistConfig, DistKind, EngineConfig, KneeRule, LoadConfig, LoadMode, RunConfig,
    SloConfig, ThinkDist, WorkloadConfig, WorkloadPreset,
};
pub use error::ConfigError;
pub use limits::{Limit, LimitKind, Limits, limits};
pub use recorder::{MAX_TRACED_SEATS, MAX_TRACED_STEPS, QueuePoint, RequestSamples, Seat, Snapshot, StepWindow, Trace};
pub use scenario::{Capacity, Load, Scenario, Slo};
pub use simulation::{Finished, Options, Simulation, Stop};
pub use sizing::{SizeInput, Sizing, SizingBasis, size};
pub use stats::Stat;
pub use summary::{
    FinalState, Goodput, LittlesLaw, Outcome, STEADY_MAX_LITTLE_ERROR, STEADY_MIN_KEEP_UP, STEADY_MIN_REQUESTS,
    StepKinds, Summary,
};
pub use sweep::{Knee, P99Crossing, P99Within, Saturation, Sweep, SweepOptions, SweepPoint, SweepRun, sweep};

/// Validates `config`, measures the replica's capacity, runs it and summarises.
pub fn simulate(config: &Config) -> Result<Summary, ConfigError> {
    let (scenario, capacity) = prepare(config)?;
    run_against(&scenario, &capacity)
}

/// Like [`simulate`] but reusing a capacity measured before for the same engine and workload.
pub fn simulate_with_capacity(config: &Config, capacity: Capacity) -> Result<Summary, ConfigError> {
    run_against(&Scenario::resolve(config, &capacity)?, &capacity)
}

fn run_against(scenario: &Scenario, capacity: &Capacity) -> Result<Summary, ConfigError> {
    Ok(Simulation::new(scenario, Options::default()).run()?.with_capacity(capacity).summary)
}

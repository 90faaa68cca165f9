//! The wall clock, for the two subcommands that live in real time: `serve-metrics` paces the
//! engine by it (the engine never reads it), and `probe` times its scrapes. clippy forbids
//! reading a clock anywhere else.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Wall time since a start.
pub struct WallClock(Instant);

#[allow(clippy::disallowed_methods, reason = "the one place the CLI reads the wall clock; the engine never does")]
impl WallClock {
    /// Starts counting now.
    pub fn start() -> Self {
        WallClock(Instant::now())
    }

    /// Seconds since the start.
    pub fn elapsed_s(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }

    /// Sleeps until `at` after the start (at once if that has passed).
    pub fn sleep_until(&self, at: Duration) {
        if let Some(wait) = (self.0 + at).checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }

    /// Now, in Unix seconds (0 on a clock set before 1970).
    pub fn unix_s() -> f64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
    }
}

//! The CLI's one error type: a message for one stderr line and the exit code that goes with it.

use std::fmt;
use std::io::Write;
use std::process::ExitCode;

use kneelab_sim::ConfigError;

/// Exit code for bad input (a bad file, config or flag), the same code clap uses for usage errors.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code when the output cannot be written (anything but a closed pipe).
pub const EXIT_OUTPUT: u8 = 1;

/// Something the user must fix, or an output that could not be written.
#[derive(Debug, PartialEq)]
pub struct CliError {
    message: String,
    code: u8,
}

impl CliError {
    /// Bad input: exit code 2.
    pub fn input(message: impl Into<String>) -> Self {
        CliError { message: one_line(message.into()), code: EXIT_BAD_INPUT }
    }

    /// A config error, prefixed by where the config came from (`examples/rag.json: engine.max_num_seqs: ...`).
    pub fn config(source: &str, error: &ConfigError) -> Self {
        CliError::input(format!("{source}: {error}"))
    }

    /// A flag's value the core rejected: the core names its parameter (`peak_qps`), the user typed
    /// the flag (`--peak-qps`), so say the flag.
    pub fn flag(error: &ConfigError) -> Self {
        let flag = format!("--{}", error.path.replace('_', "-"));
        CliError::input(format!("{flag}: {}", error.message))
    }

    /// Output could not be written: exit code 1.
    pub fn output(error: &std::io::Error) -> Self {
        CliError { message: format!("cannot write the output: {error}"), code: EXIT_OUTPUT }
    }

    /// Prints `kneelab: error: <message>` on stderr and returns the exit code.
    pub fn report(&self) -> ExitCode {
        // If stderr itself is gone there is nobody left to tell.
        let _ = writeln!(std::io::stderr(), "kneelab: error: {}", self.message);
        ExitCode::from(self.code)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A one-line warning on stderr (the run still succeeds).
pub fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "kneelab: warning: {}", one_line(message.to_string()));
}

/// The contract is one line per error: fold any newline an underlying message carries.
fn one_line(message: String) -> String {
    if message.contains(['\n', '\r']) {
        message.split(['\n', '\r']).filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; ")
    } else {
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_named_as_typed() {
        let e = CliError::flag(&ConfigError::new("peak_qps", "must be positive"));
        assert_eq!(e.to_string(), "--peak-qps: must be positive");
    }

    #[test]
    fn messages_stay_on_one_line() {
        assert_eq!(CliError::input("a\nb\r\nc").to_string(), "a; b; c");
    }

    #[test]
    fn config_errors_say_where_the_config_came_from() {
        let e = CliError::config("x.json", &ConfigError::new("engine.max_num_seqs", "must be from 1 to 16384, got 0"));
        assert_eq!(e.to_string(), "x.json: engine.max_num_seqs: must be from 1 to 16384, got 0");
    }
}

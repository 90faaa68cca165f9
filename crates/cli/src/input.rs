//! Reading CONFIG: a path, or `-` for stdin, parsed and validated by the core's one schema.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use kneelab_sim::Config;

use crate::error::CliError;

/// A config is a small JSON object; refuse to slurp anything much larger (`/dev/zero`, a log file).
const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// A config that parsed and validated, with the name to use in messages about it.
pub struct Loaded {
    /// The config.
    pub config: Config,
    /// The path as given, or `<stdin>`.
    pub source: String,
}

/// Reads, parses and validates the config at `path` (`-` = stdin). Every failure is one
/// [`CliError`] naming the path and, for a bad config, the field.
pub fn load(path: &Path) -> Result<Loaded, CliError> {
    let (text, source) = read(path)?;
    let config = parse(&text).map_err(|e| match e {
        ParseError::Empty => CliError::input(format!("{source}: is empty; expected a JSON config object ({{ ... }})")),
        ParseError::Config(e) => CliError::config(&source, &e),
    })?;
    Ok(Loaded { config, source })
}

/// The text at `path` (`-` = stdin) and the name to use in messages about it.
pub fn read(path: &Path) -> Result<(String, String), CliError> {
    let (text, source) = if path == Path::new("-") {
        (read_limited(io::stdin().lock()), "<stdin>".to_string())
    } else {
        let source = path.display().to_string();
        (File::open(path).and_then(read_limited), source)
    };
    let text = text.map_err(|e| CliError::input(format!("{source}: cannot read the config: {}", describe(&e))))?;
    Ok((text, source))
}

/// Why a config text was rejected.
#[derive(Debug)]
enum ParseError {
    Empty,
    Config(kneelab_sim::ConfigError),
}

fn parse(text: &str) -> Result<Config, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let config = Config::from_json(text).map_err(ParseError::Config)?;
    config.validate().map_err(ParseError::Config)?;
    Ok(config)
}

fn read_limited(reader: impl Read) -> io::Result<String> {
    let mut bytes = Vec::new();
    reader.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "larger than 16 MiB; a config is a small JSON object"));
    }
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
    })
}

/// The io error in words, without Rust's `(os error 2)` noise where a plain phrase says it.
fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        io::ErrorKind::IsADirectory => "is a directory".to_string(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rows() {
        // (text, Ok(seed) | Err(phrase of the message))
        let rows: &[(&str, Result<u64, &str>)] = &[
            ("{}", Ok(42)),
            (r#"{"seed": 7}"#, Ok(7)),
            ("", Err("empty")),
            (" \n\t", Err("empty")),
            ("[1]", Err("JSON object")),
            ("{\n  \"seed\": 1,\n}", Err("line 3, column 1")),
            (r#"{"engine": {"max_num_seqs": 0}}"#, Err("engine.max_num_seqs: must be from 1 to 16384, got 0")),
        ];
        for (text, want) in rows {
            let got = parse(text).map(|c| c.seed).map_err(|e| match e {
                ParseError::Empty => "empty".to_string(),
                ParseError::Config(e) => e.to_string(),
            });
            match (got, want) {
                (Ok(seed), Ok(want)) => assert_eq!(seed, *want, "{text}"),
                (Err(msg), Err(want)) => assert!(msg.contains(want), "{text}: {msg}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn oversized_input_is_refused() {
        let big = io::repeat(b' ').take(MAX_CONFIG_BYTES + 10);
        assert!(read_limited(big).unwrap_err().to_string().contains("16 MiB"));
    }
}

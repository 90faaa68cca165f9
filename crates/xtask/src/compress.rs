//! Each file of the built site that a browser fetches, stored a second time gzipped beside it
//! (`FILE.gz`), compressed once at build time with Zopfli: a gzip stream any client decodes, about
//! 4% smaller than `gzip -9`'s. `cargo xtask serve` sends it to a client that accepts gzip, and a
//! host that serves precompressed files (nginx's `gzip_static`, Caddy's `precompressed`) can too.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The suffix of a file's precompressed twin.
pub const SUFFIX: &str = "gz";

/// Zopfli's passes over each block: its default (15); more gain a few bytes at twice the time.
const ITERATIONS: u64 = 15;

/// Writes `FILE.gz` beside every file under `site` that [`compressible`] accepts, two files at a
/// time (the machines this builds on have two cores). Returns how many it wrote.
pub fn precompress(site: &Path) -> Result<usize> {
    let mut files = Vec::new();
    crate::collect_files(site, &mut files)?;
    files.retain(|f| compressible(f));
    // Every other file on a second thread, so the big ones (the wasm modules) are shared out too.
    std::thread::scope(|scope| {
        let other = scope.spawn(|| files.iter().skip(1).step_by(2).try_for_each(|f| write_gzipped(f)));
        files.iter().step_by(2).try_for_each(|f| write_gzipped(f))?;
        other.join().expect("the compressing thread does not panic")
    })?;
    Ok(files.len())
}

/// The kinds of file worth compressing: text and wasm (not images, which are compressed already).
pub fn compressible(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("html" | "css" | "js" | "mjs" | "wasm" | "json" | "svg"))
}

/// `path` with [`SUFFIX`] added: `app.js` -> `app.js.gz`.
pub fn twin(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// `bytes` as a gzip stream, compressed by Zopfli.
pub fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let options = zopfli::Options {
        iteration_count: ITERATIONS.try_into().expect("a positive count"),
        ..zopfli::Options::default()
    };
    let mut out = Vec::with_capacity(bytes.len() / 2);
    zopfli::compress(options, zopfli::Format::Gzip, bytes, &mut out).context("gzip-compressing")?;
    Ok(out)
}

fn write_gzipped(file: &Path) -> Result<()> {
    let bytes = fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let gz = twin(file);
    fs::write(&gz, gzip(&bytes)?).with_context(|| format!("writing {}", gz.display()))
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn the_twin_is_a_gzip_stream_of_the_same_bytes_and_smaller() {
        let text = "the knee: where p99 tears away from p50. ".repeat(200);
        let gz = gzip(text.as_bytes()).unwrap();
        assert!(gz.len() < text.len() / 10, "{} bytes from {}", gz.len(), text.len());
        let mut back = String::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut back).unwrap();
        assert_eq!(back, text);
    }

    #[test]
    fn only_text_and_wasm_get_a_twin() {
        assert!(compressible(Path::new("pkg/kneelab_web_bg.wasm")));
        assert!(compressible(Path::new("index.html")));
        assert!(!compressible(Path::new("favicon.png")));
        assert!(!compressible(Path::new("main.js.gz")));
        assert_eq!(twin(Path::new("js/a.js")), PathBuf::from("js/a.js.gz"));
    }
}

//! `cargo xtask build-web`: kneelab-web -> wasm32 -> wasm-bindgen (`--target web`) -> wasm-opt -> www/pkg/.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use flate2::{Compression, write::GzEncoder};

use crate::modules::{CRATE_NAME, LATER_NAME, MODULES, PASTE_NAME};
use crate::{cargo, collect_files, describe, node_tool, rel, repo_root};

const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// Arguments of `cargo xtask build-web`.
#[derive(clap::Args)]
pub struct Args {
    /// Build with the dev profile (quick, large, with debug info and assertions) instead of
    /// `wasm-release`; skips wasm-opt.
    #[arg(long)]
    pub dev: bool,
}

/// Builds the page's wasm module and JS glue into www/pkg/, the page as it ships into
/// target/site/ (bundled, minified), and prints what it weighs.
pub fn run(args: &Args) -> Result<()> {
    let root = repo_root();
    let out_dir = root.join("www").join("pkg");
    ensure_wasm_target()?;
    // Start clean so files from an older build (snippets, renamed modules) cannot linger.
    if out_dir.exists() {
        fs::remove_dir_all(&out_dir).with_context(|| format!("removing {}", out_dir.display()))?;
    }
    for (features, name) in MODULES {
        let wasm = build_wasm(args.dev, features)?;
        bindgen(&wasm, &out_dir, name, args.dev)?;
        let bg_wasm = out_dir.join(format!("{name}_bg.wasm"));
        if args.dev {
            println!("dev build: wasm-opt skipped (the wasm keeps its debug info)");
        } else {
            optimise(&bg_wasm, false)?;
        }
    }
    write_schema(&out_dir)?;
    let (site, unbundled) = crate::bundle::build_site(&root.join("www"), args.dev)?;
    if !args.dev {
        let count = crate::compress::precompress(&site)?;
        println!("==> {count} files precompressed (FILE.gz, by Zopfli)");
    }
    print_sizes(&site, &unbundled)
}

/// The page's settings module: `kneelab_sim::schema()` as an ES module the page imports
/// synchronously, before (and without) the wasm.
pub const SCHEMA_MODULE: &str = "kneelab_schema.js";

/// Writes `kneelab_sim::schema()` into `out_dir` as [`SCHEMA_MODULE`], with the charts' colour
/// schemes (`themes.light`, `themes.dark`: the lab's CSS defaults for `--kl-bg`, `--kl-fg`,
/// `--kl-muted` and `--kl-grid`, so a chart and the chrome around it start from one colour).
pub fn write_schema(out_dir: &Path) -> Result<()> {
    let mut schema = serde_json::to_value(kneelab_sim::schema::schema()).context("serialising the schema")?;
    schema["themes"] = serde_json::json!({
        "light": chrome_colours(&kneelab_plot::Theme::LIGHT),
        "dark": chrome_colours(&kneelab_plot::Theme::DARK),
    });
    let json = serde_json::to_string(&schema).context("serialising the schema")?;
    let module = format!(
        "// Written by `cargo xtask build-web` from kneelab_sim::schema: the page's settings, stated once in Rust.\n\
         function freeze(v) {{\n\
         \x20 if (v && typeof v === 'object') Object.values(v).forEach(freeze);\n\
         \x20 return Object.freeze(v);\n\
         }}\n\
         export default freeze({json});\n"
    );
    let path = out_dir.join(SCHEMA_MODULE);
    fs::write(&path, module).with_context(|| format!("writing {}", path.display()))
}

/// A scheme's colours a host page can set, as CSS hex.
fn chrome_colours(theme: &kneelab_plot::Theme) -> serde_json::Value {
    let hex = |c: kneelab_plot::plotters::style::RGBColor| format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2);
    serde_json::json!({
        "bg": hex(theme.background),
        "fg": hex(theme.text),
        "muted": hex(theme.muted),
        "grid": hex(theme.grid),
    })
}

/// Installs the wasm32 target through rustup if this toolchain lacks it (a fresh machine does).
pub fn ensure_wasm_target() -> Result<()> {
    let output = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .context("could not run `rustup target list --installed`: is rustup installed?")?;
    if !output.status.success() {
        bail!("`rustup target list --installed` failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    if String::from_utf8_lossy(&output.stdout).lines().any(|line| line.trim() == WASM_TARGET) {
        return Ok(());
    }
    crate::run_step("install the wasm32 target", Command::new("rustup").args(["target", "add", WASM_TARGET]))
}

/// Rust flags that replace this machine's paths (the registry, the checkout) in panic locations
/// compiled into the wasm: the page ships to readers and should name only itself.
fn remap_paths() -> String {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let mut flags = vec![format!("--remap-path-prefix={}=kneelab", repo_root().display())];
    if let Some(home) = cargo_home {
        flags.push(format!("--remap-path-prefix={}=cargo", home.display()));
    }
    // Cargo's encoding of several flags: separated by the ASCII unit separator.
    flags.join("\x1f")
}

/// Builds kneelab-web for wasm32 (with `features`, if any) and returns the path of the `.wasm`
/// cargo produced.
pub fn build_wasm(dev: bool, features: Option<&str>) -> Result<PathBuf> {
    let profile = if dev { "dev" } else { "wasm-release" };
    let mut cmd = cargo();
    cmd.args(["build", "-p", "kneelab-web", "--target", WASM_TARGET])
        .args(["--profile", profile])
        .args(features.map(|f| ["--features", f]).into_iter().flatten())
        // JSON on stdout tells us where the artifact is (target dir, profile dir);
        // diagnostics are still rendered for humans on stderr.
        .arg("--message-format=json-render-diagnostics")
        .env("CARGO_ENCODED_RUSTFLAGS", remap_paths())
        .stdout(Stdio::piped());
    println!("\n==> build kneelab-web for {WASM_TARGET} ({profile})\n    $ {}", describe(&cmd));
    let mut child = cmd.spawn().with_context(|| format!("could not start `{}`", describe(&cmd)))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut wasm = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.context("reading cargo's output")?;
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if message["reason"] == "compiler-artifact" && message["target"]["name"] == CRATE_NAME {
            let files = message["filenames"].as_array().into_iter().flatten();
            if let Some(file) = files.filter_map(|f| f.as_str()).find(|f| f.ends_with(".wasm")) {
                wasm = Some(PathBuf::from(file));
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("building kneelab-web for {WASM_TARGET} failed (`{}` exited with {status})", describe(&cmd));
    }
    wasm.context("cargo built kneelab-web but reported no .wasm file: is it still a cdylib?")
}

/// Runs wasm-bindgen (as a library, same version as the wasm-bindgen crate) into `out_dir`, as
/// `name.js` and `name_bg.wasm`.
pub fn bindgen(wasm: &Path, out_dir: &Path, name: &str, dev: bool) -> Result<()> {
    println!("==> wasm-bindgen --target web -> {}/{name}.js", rel(out_dir).display());
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(wasm)
        .out_name(name)
        .web(true)?
        // Without this the generated `init()` has no default URL for the .wasm and fails.
        .omit_default_module_path(false)
        .debug(dev)
        .keep_debug(dev)
        .generate(out_dir)
        .with_context(|| format!("wasm-bindgen failed on {}", wasm.display()))
}

/// Shrinks the wasm in place with the npm package binaryen's wasm-opt ([`node_tool`](crate::node_tool)), keeping
/// its function names if `names` (for `cargo xtask weigh`; the code is the same). Debian's
/// binaryen (108) is too old: its output fails to load in Chromium.
pub fn optimise(wasm: &Path, names: bool) -> Result<()> {
    let Some(wasm_opt) = node_tool("wasm-opt")? else {
        println!("warning: the wasm is unoptimised (about a third larger)");
        return Ok(());
    };
    let before = fs::metadata(wasm)?.len();
    // Plain -Oz: `--all-features` would emit imports Chromium rejects. The toolchain's custom
    // sections (producers, target features) are nothing a browser reads: about 250 bytes gzipped.
    let mut cmd = Command::new(&wasm_opt);
    cmd.args(names.then_some("-g")).args(["-Oz", "--strip-producers", "--strip-target-features"]);
    cmd.arg(wasm).arg("-o").arg(wasm);
    println!("==> wasm-opt -Oz\n    $ {}", describe(&cmd));
    let status = cmd.status().with_context(|| format!("could not start {}", wasm_opt.display()))?;
    if !status.success() {
        bail!("wasm-opt failed ({status}) on {}", wasm.display());
    }
    let after = fs::metadata(wasm)?.len();
    println!("    {} -> {}", human(before), human(after));
    Ok(())
}

/// Prints raw and gzipped sizes (the precompressed twin's, which `serve` sends) of every file the
/// built pages may load (html, css, js, wasm), but the `unbundled` module sources (loaded only if
/// something fetches one by URL).
fn print_sizes(site: &Path, unbundled: &[PathBuf]) -> Result<()> {
    let mut files = Vec::new();
    collect_files(site, &mut files)?;
    files.retain(|f| is_page_file(f) && !unbundled.iter().any(|u| site.join(u) == *f));
    files.sort();
    println!("\nwhat the pages may load ({}):", rel(site).display());
    println!("    {:<40} {:>12} {:>12}", "file", "raw", "gzip");
    let (mut total_raw, mut total_gzip) = (0, 0);
    for file in &files {
        let bytes = fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let raw = bytes.len() as u64;
        // What `serve` sends: the precompressed twin where there is one.
        let twin = crate::compress::twin(file);
        let gzip =
            if twin.is_file() { fs::metadata(&twin)?.len() } else { gzipped_len(&bytes, Compression::default())? };
        let mut name = file.strip_prefix(site).unwrap_or(file).display().to_string();
        // The paste and fleet modules are fetched only when a reader gets to them: not part
        // of the page's load.
        let on_use = |n: &str| n.starts_with(PASTE_NAME) || n.starts_with(LATER_NAME);
        if file.file_name().and_then(|n| n.to_str()).is_some_and(on_use) {
            name += " (on use)";
        } else {
            total_raw += raw;
            total_gzip += gzip;
        }
        println!("    {name:<40} {:>12} {:>12}", human(raw), human(gzip));
    }
    println!("    {:<40} {:>12} {:>12}", "both pages, all but on use", human(total_raw), human(total_gzip));
    println!("(what each page loads on opening is measured by the budget test in tests/lab.spec.mjs;");
    println!(" {} module sources not bundled are copied as they are, loaded only if fetched by URL)", unbundled.len());
    Ok(())
}

/// The kinds of file the page fetches; .d.ts and the like are for editors, not browsers.
fn is_page_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    !name.ends_with(".d.ts")
        && matches!(path.extension().and_then(|e| e.to_str()), Some("html" | "css" | "js" | "mjs" | "wasm"))
}

/// `bytes` gzipped at `level`, in bytes.
pub fn gzipped_len(bytes: &[u8], level: Compression) -> Result<u64> {
    let mut encoder = GzEncoder::new(Vec::new(), level);
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?.len() as u64)
}

/// `1234567` -> `1205.6 KiB`; small files in bytes.
pub fn human(bytes: u64) -> String {
    if bytes < 1024 { format!("{bytes} B") } else { format!("{:.1} KiB", bytes as f64 / 1024.0) }
}

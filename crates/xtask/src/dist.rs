//! `cargo xtask dist`: the lab as an npm package a course site installs or unpacks, with no Rust.
//!
//! `dist/` holds the optimised wasm and its glue (`pkg/`), the element's modules (`js/`: the
//! package's entry points bundled and minified, sharing their chunks), the iframe page
//! (`lab.html`, with its icon), a `package.json` with `exports`, the element's TypeScript
//! declaration and custom-elements manifest, a README and the licences; `npm pack` makes it
//! `target/kneelab-VERSION.tgz`. The modules find each other and the wasm by relative URLs
//! (`import.meta.url`), so the package works at any path and from another origin.

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{rel, repo_root};

/// Arguments of `cargo xtask dist`.
#[derive(clap::Args)]
pub struct Args {
    /// Package www/pkg/ as it is, without building the wasm first.
    #[arg(long)]
    pub no_build: bool,
}

/// The package's modules (its `exports` and `lab.html`'s), bundled from www/ into `js/`.
const ENTRIES: &[&str] = &["js/knee-lab.js", "js/fleet-lab.js", "js/wasm.js", "js/lab-page.js"];

/// What else the package holds: (from, relative to the workspace root; to, inside the package).
/// The page's files come from the built site (minified).
const FILES: &[(&str, &str)] = &[
    ("target/site/pkg/kneelab_web.js", "pkg/kneelab_web.js"),
    ("target/site/pkg/kneelab_web_bg.wasm", "pkg/kneelab_web_bg.wasm"),
    ("target/site/pkg/kneelab_later.js", "pkg/kneelab_later.js"),
    ("target/site/pkg/kneelab_later_bg.wasm", "pkg/kneelab_later_bg.wasm"),
    ("target/site/lab.html", "lab.html"),
    ("target/site/css/lab.css", "css/lab.css"),
    ("target/site/favicon.svg", "favicon.svg"),
    ("package/knee-lab.d.ts", "js/knee-lab.d.ts"),
    ("package/fleet-lab.d.ts", "js/fleet-lab.d.ts"),
    ("package/later.d.ts", "pkg/kneelab_later.d.ts"),
    ("package/custom-elements.json", "custom-elements.json"),
    ("package/README.md", "README.md"),
    ("LICENSE-MIT", "LICENSE-MIT"),
    ("LICENSE-APACHE", "LICENSE-APACHE"),
];

/// Builds the page (unless `--no-build`), writes `dist/` and packs it.
pub fn run(args: &Args) -> Result<()> {
    if !args.no_build {
        crate::web::run(&crate::web::Args { dev: false })?;
    }
    let root = repo_root();
    let dist = root.join("dist");
    if dist.exists() {
        fs::remove_dir_all(&dist).with_context(|| format!("removing {}", dist.display()))?;
    }
    for (from, to) in FILES {
        let (from, to) = (root.join(from), dist.join(to));
        if !from.exists() {
            bail!("{} is missing: build the page first (`cargo xtask build-web`)", rel(&from).display());
        }
        fs::create_dir_all(to.parent().expect("a file in dist/ has a parent"))?;
        fs::copy(&from, &to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    }
    let esbuild =
        crate::node_tool("esbuild")?.context("the package's modules are bundled with esbuild: install npm")?;
    let entries = ENTRIES.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let meta = crate::bundle::meta_path();
    crate::bundle::bundle(&esbuild, &root.join("www"), &entries, &dist, false, Some(&meta))?;
    // lab.html came from the site, whose chunks are not the package's.
    crate::bundle::write_preloads(&meta, &root.join("www"), &dist, &["lab.html".to_string()])?;
    let manifest = package_json();
    fs::write(dist.join("package.json"), types_first(&serde_json::to_string_pretty(&manifest)?) + "\n")?;

    let target = root.join("target");
    fs::create_dir_all(&target)?;
    let mut pack = Command::new("npm");
    pack.args(["pack", "--quiet", "--pack-destination"]).arg(&target).arg(&dist);
    crate::run_step("npm pack dist/", &mut pack)?;
    let tarball = target.join(format!("kneelab-{}.tgz", env!("CARGO_PKG_VERSION")));
    let size = fs::metadata(&tarball).with_context(|| format!("npm pack wrote no {}", tarball.display()))?.len();
    println!("\n{} ({:.1} KiB): {}", rel(&tarball).display(), size as f64 / 1024.0, describe_files(&dist)?);
    Ok(())
}

/// `text` (pretty JSON) with each export's `"types"` condition before its `"default"`: conditions
/// match in order, TypeScript's must come first and Node's `default` last, while serde_json's map
/// writes its keys sorted.
fn types_first(text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for i in 1..lines.len() {
        let (default, types) = (lines[i - 1].trim_start(), lines[i].trim_start());
        if default.starts_with("\"default\": ") && default.ends_with(',') && types.starts_with("\"types\": ") {
            let indent = &lines[i][..lines[i].len() - types.len()];
            let (default, types) = (default.trim_end_matches(','), types.to_string());
            (lines[i - 1], lines[i]) = (format!("{indent}{types},"), format!("{indent}{default}"));
        }
    }
    lines.join("\n")
}

/// The package's `package.json`: its version is the workspace's.
fn package_json() -> serde_json::Value {
    serde_json::json!({
        "name": "kneelab",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "The knee lab: a simulated vLLM replica in a <knee-lab> element (Rust compiled to WebAssembly), for lessons on LLM-serving latency, throughput, goodput and the knee.",
        "license": "MIT OR Apache-2.0",
        "type": "module",
        "main": "./js/knee-lab.js",
        "module": "./js/knee-lab.js",
        "types": "./js/knee-lab.d.ts",
        "exports": {
            ".": { "types": "./js/knee-lab.d.ts", "default": "./js/knee-lab.js" },
            "./fleet-lab": { "types": "./js/fleet-lab.d.ts", "default": "./js/fleet-lab.js" },
            "./wasm": "./js/wasm.js",
            "./later": { "types": "./pkg/kneelab_later.d.ts", "default": "./pkg/kneelab_later.js" },
            "./lab.html": "./lab.html",
            "./custom-elements.json": "./custom-elements.json",
            "./package.json": "./package.json"
        },
        "customElements": "custom-elements.json",
        "sideEffects": ["./js/*.js"],
        "files": ["js", "pkg", "css", "lab.html", "favicon.svg", "custom-elements.json", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
        "keywords": ["vllm", "llm", "serving", "latency", "web-component", "custom-element", "webassembly"]
    })
}

/// "N files, X KiB unpacked".
fn describe_files(dir: &Path) -> Result<String> {
    fn walk(dir: &Path, count: &mut u64, bytes: &mut u64) -> Result<()> {
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, count, bytes)?;
            } else {
                *count += 1;
                *bytes += fs::metadata(&path)?.len();
            }
        }
        Ok(())
    }
    let (mut count, mut bytes) = (0, 0);
    walk(dir, &mut count, &mut bytes)?;
    Ok(format!("{count} files, {:.1} KiB unpacked", bytes as f64 / 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_export_names_its_types_before_its_default() {
        let text = types_first(&serde_json::to_string_pretty(&package_json()).unwrap());
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(manifest, package_json(), "only the order changes");
        for (name, export) in manifest["exports"].as_object().unwrap() {
            if let Some(conditions) = export.as_object() {
                let (types, default) = (
                    text.find(&format!("\"types\": {}", conditions["types"])),
                    text.find(&format!("\"default\": {}", conditions["default"])),
                );
                assert!(types.unwrap() < default.unwrap(), "{name}: types first");
            }
        }
        assert!(manifest["exports"]["./later"]["types"].is_string(), "kneelab/later is typed");
    }
}

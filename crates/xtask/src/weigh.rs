//! `cargo xtask weigh`: what a lab's wasm module (kneelab_web, the first a lab loads) is made of,
//! part by part. It builds the module as `build-web` ships it but keeps its function names
//! (wasm-opt's `-g`; the code is the same), reads the code and data sections with wasmparser,
//! sorts each function into a part by its name and gzips each part alone. Where to look when the
//! page is too heavy.

use std::collections::BTreeMap;
use std::fs;

use anyhow::{Context, Result};
use flate2::Compression;
use wasmparser::{Name, Parser, Payload};

use crate::{rel, repo_root, web};

/// The parts a function or the data can belong to.
const PARTS: [&str; 9] = [
    "the engine (kneelab-sim, kneelab-lab)",
    "exports (wasm-bindgen shims, with what they inline)",
    "charts (kneelab-plot, plotters, plotters-canvas)",
    "config reading (read.rs, boundary.rs, serde)",
    "the rest of kneelab-web and wasm-bindgen",
    "float formatting (core's, which plotters-canvas's colours need)",
    "Rust's core, alloc and std",
    "libm and the allocator (dlmalloc)",
    "data (strings, tables)",
];

/// Builds, weighs and prints the parts of `kneelab_web_bg.wasm`.
pub fn run() -> Result<()> {
    web::ensure_wasm_target()?;
    let wasm = web::build_wasm(false, None)?;
    let dir = repo_root().join("target").join("weigh");
    web::bindgen(&wasm, &dir, crate::modules::CRATE_NAME, false)?;
    let module = dir.join(format!("{}_bg.wasm", crate::modules::CRATE_NAME));
    web::optimise(&module, true)?;
    let bytes = fs::read(&module).with_context(|| format!("reading {}", module.display()))?;
    let parts = parts(&bytes)?;
    // (gzipped, raw, part), heaviest first.
    let mut rows = Vec::new();
    for (part, bytes) in &parts {
        rows.push((web::gzipped_len(bytes, Compression::best())?, bytes.len() as u64, *part));
    }
    rows.sort_by_key(|&(gzipped, ..)| std::cmp::Reverse(gzipped));
    println!(
        "\nwhat {} is made of ({}, its names kept):",
        module.file_name().unwrap().to_string_lossy(),
        rel(&dir).display()
    );
    println!("    {:<66} {:>10} {:>14}", "part", "raw", "gzipped alone");
    for &(gzipped, raw, part) in &rows {
        println!("    {part:<66} {:>10} {:>14}", web::human(raw), web::human(gzipped));
    }
    let (gzipped, raw) = rows.iter().fold((0, 0), |(g, r), &(gz, raw, _)| (g + gz, r + raw));
    println!("    {:<66} {:>10} {:>14}", "all of it", web::human(raw), web::human(gzipped));
    println!("(each part gzipped by itself, so the column sums to a little more than the module gzipped whole)");
    Ok(())
}

/// Each part's function bodies and data, by [`part_of`] the function's name.
fn parts(wasm: &[u8]) -> Result<BTreeMap<&'static str, Vec<u8>>> {
    let (mut imported, mut bodies, mut names, mut data) = (0u32, Vec::new(), BTreeMap::new(), Vec::new());
    for payload in Parser::new(0).parse_all(wasm) {
        match payload? {
            Payload::ImportSection(imports) => {
                for import in imports.into_imports() {
                    imported += u32::from(matches!(import?.ty, wasmparser::TypeRef::Func(_)));
                }
            }
            Payload::CodeSectionEntry(body) => bodies.push(&wasm[body.range()]),
            Payload::DataSection(segments) => {
                for segment in segments {
                    data.extend_from_slice(segment?.data);
                }
            }
            Payload::CustomSection(section) => {
                if let wasmparser::KnownCustom::Name(reader) = section.as_known() {
                    for name in reader {
                        if let Name::Function(map) = name? {
                            for naming in map {
                                let naming = naming?;
                                names.insert(naming.index, naming.name.to_string());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    anyhow::ensure!(!names.is_empty(), "the module kept no function names (was wasm-opt run with -g?)");
    let mut parts: BTreeMap<&'static str, Vec<u8>> = BTreeMap::new();
    for (i, body) in bodies.into_iter().enumerate() {
        let name = names.get(&(imported + i as u32)).map_or("", String::as_str);
        parts.entry(part_of(name)).or_default().extend_from_slice(body);
    }
    parts.insert(PARTS[8], data);
    Ok(parts)
}

/// The part a function belongs to, by its (demangled) name.
fn part_of(name: &str) -> &'static str {
    if name.contains("flt2dec")
        || name.contains("num::bignum")
        || (name.starts_with("<f64 as core") && name.contains("fmt"))
    {
        return PARTS[5];
    }
    if name.ends_with(" shim") {
        return PARTS[1];
    }
    // The crate of the function, or of the type a trait is implemented for.
    let path = name.trim_start_matches(['<', '&']).trim_start_matches("dyn ").trim_start_matches("mut ");
    let krate = path.split([':', '<', ' ', '[']).next().unwrap_or_default();
    match krate {
        "kneelab_sim" | "kneelab_lab" => PARTS[0],
        "kneelab_plot" | "plotters" | "plotters_backend" | "plotters_canvas" => PARTS[2],
        "kneelab_web" if path.starts_with("kneelab_web::read") || path.starts_with("kneelab_web::boundary") => PARTS[3],
        "serde" | "serde_core" => PARTS[3],
        "kneelab_web" | "wasm_bindgen" | "js_sys" | "web_sys" | "serde_wasm_bindgen" | "console_error_panic_hook" => {
            PARTS[4]
        }
        "libm" | "dlmalloc" | "__rdl_alloc" | "__rdl_dealloc" | "__rdl_realloc" | "__rust_alloc" | "__rust_dealloc"
        | "__rust_realloc" => PARTS[7],
        _ => PARTS[6],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_functions_into_parts_by_name() {
        for (name, part) in [
            ("kneelab_sim::simulation::Simulation::step::hd7d8d947a1715c64", 0),
            ("<kneelab_lab::Lab>::run_point", 0),
            ("lab_draw externref shim multivalue shim", 1),
            ("<plotters_canvas::canvas::CanvasBackend as plotters_backend::DrawingBackend>::draw_text::h15", 2),
            ("<kneelab_web::read::Reader as serde_core::de::Deserializer>::deserialize_map::hb4", 3),
            ("kneelab_web::boundary::config::h5672e1d115d0117d", 3),
            ("kneelab_web::lab::Lab::readouts::hbc03f1e2b5bf1fb8", 4),
            ("<f64 as core[c5930c85a12de822]::fmt::Display>::fmt", 5),
            ("core[c5930c85a12de822]::num::flt2dec::strategy::dragon::mul_pow10", 5),
            ("<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold::ha3", 6),
            ("alloc::str::join_generic_copy::heb5f8150690d89ce", 6),
            ("<dlmalloc[e24a27700634d609]::dlmalloc::Dlmalloc<dlmalloc::sys::System>>::malloc", 7),
            ("libm::math::pow::pow::he005156034048a12", 7),
        ] {
            assert_eq!(part_of(name), PARTS[part], "{name}");
        }
    }
}

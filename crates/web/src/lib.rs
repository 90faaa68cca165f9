//! The wasm boundary of the kneelab lesson page (stub: the real crate replaces this).

use wasm_bindgen::prelude::*;

/// Runs once when the module is instantiated: route Rust panics to the browser console.
#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The crate's version, as shown on the page (for example `kneelab 0.0.0`).
#[wasm_bindgen]
pub fn version() -> String {
    format!("kneelab {}", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_names_the_project() {
        assert_eq!(super::version(), concat!("kneelab ", env!("CARGO_PKG_VERSION")));
    }
}

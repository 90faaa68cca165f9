//! The page's wasm modules: kneelab-web built four times, each with the features one part of a
//! page needs first. The build makes them all (`web`); a page's head names its first (`bundle`).

/// The wasm-bindgen output name of the first module, the one a lab loads as it connects
/// (js/wasm.js): `./pkg/kneelab_web.js`.
pub const CRATE_NAME: &str = "kneelab_web";
/// The lesson page's first module in its place: kneelab-web with its `lesson` feature (the
/// opening picture of one engine step), which a page asks for in its head with
/// `<meta name="kneelab-module" content="kneelab_lesson">`.
pub const LESSON_NAME: &str = "kneelab_lesson";
/// The second module, kneelab-web with its `paste` feature, which the lesson's "paste your
/// scrapes" loads on first use: `./pkg/kneelab_paste.js`.
pub const PASTE_NAME: &str = "kneelab_paste";
/// The third module, kneelab-web with its `fleet`, `player` and `engine` features, which the page
/// loads when something below the lab's charts needs it (a `<fleet-lab>`, a lab's `replica` panel,
/// the loop comparison, the `/metrics` text, sizing): `./pkg/kneelab_later.js`.
pub const LATER_NAME: &str = "kneelab_later";

/// Each module's kneelab-web features (`None`: the default, a lab alone) and its name.
pub const MODULES: [(Option<&str>, &str); 4] = [
    (None, CRATE_NAME),
    (Some("lesson"), LESSON_NAME),
    (Some("paste"), PASTE_NAME),
    (Some("fleet,player,engine"), LATER_NAME),
];

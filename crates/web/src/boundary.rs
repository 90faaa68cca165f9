//! Every value that crosses from JS is a `JsValue`, checked here in Rust: a wrong type from a
//! page (a number where a name goes, a throwing getter, a revoked proxy, a detached canvas) is an
//! `Error` naming the argument, never a fault inside the module that would leave a `Lab` unusable.
//!
//! Objects and arrays are first copied as plain data (`JSON.parse(JSON.stringify(value))`, both
//! caught), so no getter, proxy or `toJSON` of the page's runs while Rust holds a `Lab`; only
//! `typeof` checks (which cannot throw) touch the original. A config copy is then read by the
//! core's one schema ([`crate::read`]), whose structs deny unknown fields, so the page rejects
//! them as the CLI does. (Parsing JSON text in Rust would add serde_json's
//! parser to the page, about 19 KB gzipped; a JS object cannot hold a key twice, so the CLI's
//! duplicate-key check has nothing to find here.)

use kneelab_plot::Chrome;
use kneelab_sim::{Config, ConfigError};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::HtmlCanvasElement;

/// What went wrong, for the page to act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A value the core rejects (out of range, inconsistent).
    Invalid,
    /// A value of the wrong type or shape, or a field the schema does not have.
    Type,
    /// A call out of order (a method before `setConfig`).
    State,
    /// Drawing or converting a result failed.
    Internal,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Invalid => "invalid",
            Kind::Type => "type",
            Kind::State => "state",
            Kind::Internal => "internal",
        }
    }
}

/// Every error the module throws: a JS `Error` whose `path` names the field at fault (a config
/// path such as `engine.max_num_seqs`, an argument such as `canvas`, or empty), whose `kind` is
/// one of `invalid`, `type`, `state`, `internal`, and whose message starts with the path. Made
/// at once, so a `Result` carries only the handle (as `JsError` does).
#[derive(Debug)]
pub struct Fault(JsValue);

impl Fault {
    /// A fault of `kind` at `path`; the message says what is wrong and what is allowed.
    #[inline(never)]
    pub fn new(path: &str, kind: Kind, message: impl AsRef<str>) -> Fault {
        let message = message.as_ref();
        let text = if path.is_empty() { message.to_string() } else { format!("{path}: {message}") };
        let error = js_sys::Error::new(&text);
        // Setting a data property on a fresh Error cannot fail.
        let _ = js_sys::Reflect::set(&error, &"path".into(), &path.into());
        let _ = js_sys::Reflect::set(&error, &"kind".into(), &kind.name().into());
        Fault(error.into())
    }

    /// A fault of no field (a call out of order, a failed conversion).
    pub fn general(kind: Kind, message: impl AsRef<str>) -> Fault {
        Fault::new("", kind, message)
    }
}

impl From<Fault> for JsValue {
    fn from(f: Fault) -> JsValue {
        f.0
    }
}

const CONFIG_SHAPE: &str = "an object ({ engine, cost, workload, load, slo, run })";

/// Parses (without validating) a config given as a JS object, naming the field of any error.
pub fn config(value: &JsValue) -> Result<Config, Fault> {
    parse(value, "config", CONFIG_SHAPE)
}

/// A lab's measured capacity (its `capacity()`), as the third module's functions take it.
#[cfg(any(feature = "engine", feature = "player", test))]
pub fn capacity(value: &JsValue) -> Result<kneelab_sim::Capacity, Fault> {
    parse(value, "capacity", "a capacity ({ rps, base_latency_s, completions_counted, window_s })")
}

/// Parses (without validating) a JS object, the argument `name`, by a schema of the core (a
/// `Config`, a `FleetConfig`, a `Capacity`), described as `shape` in messages; errors name the
/// field (a config's by its path, anything else's under `name`), unknown keys too (every struct
/// of the schema denies unknown fields).
pub fn parse<T: serde::de::DeserializeOwned>(value: &JsValue, name: &str, shape: &str) -> Result<T, Fault> {
    if !value.is_object() {
        return Err(Fault::new(name, Kind::Type, format!("expected {shape}, got {}", describe(value))));
    }
    let copy = plain(value, name)?;
    if !copy.is_object() || js_sys::Array::is_array(&copy) {
        let got = if copy.is_object() { "an array".to_string() } else { describe(&copy) };
        return Err(Fault::new(name, Kind::Type, format!("expected {shape}, got {got}")));
    }
    crate::read::Node::of(&copy).read().map_err(|e| {
        let path = match (e.path.is_empty(), name) {
            (true, _) => name.to_string(),
            (false, "config") => e.path,
            (false, _) => format!("{name}.{}", e.path),
        };
        Fault::new(&path, Kind::Type, e.message)
    })
}

/// A plain-data copy of an object or array: `JSON.parse(JSON.stringify(value))`, whatever the
/// value's getters, proxies or `toJSON` throw reported as an error naming `name`.
fn plain(value: &JsValue, name: &str) -> Result<JsValue, Fault> {
    let unreadable =
        |e: JsValue| Fault::new(name, Kind::Type, format!("could not be read as JSON: {}", message_of(&e)));
    let text = js_sys::JSON::stringify(value).map_err(unreadable)?;
    // `JSON.stringify` gives `undefined` for values it cannot write (a toJSON returning one).
    if !JsValue::from(text.clone()).is_string() {
        return Err(Fault::new(name, Kind::Type, "could not be read as JSON"));
    }
    js_sys::JSON::parse(&String::from(text)).map_err(unreadable)
}

/// A core error (a value the core rejects) as a [`Fault`] on its field.
pub fn core(e: ConfigError) -> Fault {
    Fault::new(&e.path, Kind::Invalid, e.message)
}

/// A finite number, or an error naming `name`.
pub fn number(value: &JsValue, name: &str) -> Result<f64, Fault> {
    match value.as_f64() {
        Some(v) if v.is_finite() => Ok(v),
        Some(_) => Err(Fault::new(name, Kind::Type, format!("expected a finite number, got {}", describe(value)))),
        None => Err(Fault::new(name, Kind::Type, format!("expected a number, got {}", describe(value)))),
    }
}

/// `undefined`/`null` as `None`, else a finite number.
#[cfg(any(feature = "engine", feature = "paste", test))]
pub fn optional_number(value: &JsValue, name: &str) -> Result<Option<f64>, Fault> {
    if value.is_undefined() || value.is_null() { Ok(None) } else { number(value, name).map(Some) }
}

/// A boolean (only `true` or `false`), or an error naming `name`.
fn boolean(value: &JsValue, name: &str) -> Result<bool, Fault> {
    value
        .as_bool()
        .ok_or_else(|| Fault::new(name, Kind::Type, format!("expected true or false, got {}", describe(value))))
}

/// A string, or an error naming `name`.
pub fn string(value: &JsValue, name: &str) -> Result<String, Fault> {
    value.as_string().ok_or_else(|| Fault::new(name, Kind::Type, format!("expected a string, got {}", describe(value))))
}

/// An array of finite numbers (at most `max` of them), or an error naming `name` and the index.
pub fn numbers(value: &JsValue, name: &str, max: usize) -> Result<Vec<f64>, Fault> {
    let not_an_array = |got: String| Fault::new(name, Kind::Type, format!("expected an array of numbers, got {got}"));
    if !value.is_object() {
        return Err(not_an_array(describe(value)));
    }
    let copy = plain(value, name)?;
    if !js_sys::Array::is_array(&copy) {
        return Err(not_an_array(describe(&copy)));
    }
    let array: &js_sys::Array = copy.unchecked_ref();
    let len = array.length() as usize;
    if len > max {
        return Err(Fault::new(name, Kind::Invalid, format!("at most {max} values, got {len}")));
    }
    // JSON writes NaN and the infinities as null.
    (0..len)
        .map(|i| {
            let v = array.get(i as u32);
            let name = format!("{name}[{i}]");
            if v.is_null() { Err(Fault::new(&name, Kind::Type, "expected a finite number")) } else { number(&v, &name) }
        })
        .collect()
}

/// The arguments of every `draw*` method: a `<canvas>` element, the dark-mode flag and the host
/// page's colours (`undefined`, or up to four `0xRRGGBB` numbers: background, text, muted, grid,
/// -1 for the scheme's), or an error naming the one that is wrong.
pub fn draw_target(
    canvas: &JsValue,
    dark: &JsValue,
    chrome: &JsValue,
) -> Result<(HtmlCanvasElement, bool, Chrome), Fault> {
    let element = canvas.dyn_ref::<HtmlCanvasElement>().cloned().ok_or_else(|| {
        Fault::new("canvas", Kind::Type, format!("expected a <canvas> element, got {}", describe(canvas)))
    })?;
    let chrome =
        if chrome.is_undefined() { Chrome::default() } else { Chrome::from_rgb(&numbers(chrome, "chrome", 4)?) };
    Ok((element, boolean(dark, "dark")?, chrome))
}

/// What a JS value is, in a few words, for messages (never Rust's debug text). Only `typeof`
/// checks, which no proxy or getter can make throw.
pub(crate) fn describe(value: &JsValue) -> String {
    if value.is_undefined() {
        "undefined".into()
    } else if value.is_null() {
        "null".into()
    } else if let Some(s) = value.as_string() {
        let cut: String = s.chars().take(40).collect();
        if cut.len() < s.len() { format!("the string \"{cut}…\"") } else { format!("the string \"{cut}\"") }
    } else if let Some(n) = value.as_f64() {
        format!("the number {n}")
    } else if let Some(b) = value.as_bool() {
        format!("{b}")
    } else if value.is_function() {
        "a function".into()
    } else if value.is_bigint() {
        "a BigInt".into()
    } else if value.is_symbol() {
        "a symbol".into()
    } else {
        "an object".into()
    }
}

/// The message of a thrown JS value (an `Error`'s `message`, or the value itself in words).
fn message_of(thrown: &JsValue) -> String {
    // `instanceof` checks are caught by wasm-bindgen's glue; reading `message` of a thrown
    // proxy could still throw, so read it as data.
    match thrown.dyn_ref::<js_sys::Error>() {
        Some(_) => js_sys::Reflect::get(thrown, &JsValue::from_str("message"))
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_default(),
        None => thrown.as_string().unwrap_or_else(|| describe(thrown)),
    }
}

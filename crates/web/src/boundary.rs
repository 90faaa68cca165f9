//! Every value that crosses from JS is a `JsValue`, checked here in Rust: a wrong type from a
//! page (a number where a name goes, a throwing getter, a detached canvas) is an `Error` naming
//! the argument, never a fault inside the module that would leave a `Lab` unusable.
//!
//! A config is read as JSON text (`JSON.stringify` of the object) and parsed by the core's one
//! schema, so the page and the CLI accept and reject exactly the same configs, with the same
//! messages: unknown fields, duplicate keys, types and ranges alike.

use kneelab_sim::{Config, ConfigError};
use wasm_bindgen::{JsCast, JsError, JsValue};
use web_sys::HtmlCanvasElement;

/// Parses (without validating) a config given as a JS object, naming the field of any error.
pub fn config(value: &JsValue) -> Result<Config, JsError> {
    if !value.is_object() || js_sys::Array::is_array(value) || value.is_function() {
        return Err(JsError::new(&format!(
            "config: expected an object ({{ engine, cost, workload, load, slo, run }}), got {}",
            describe(value)
        )));
    }
    let text = js_sys::JSON::stringify(value)
        .map_err(|e| JsError::new(&format!("config: could not be read as JSON: {}", message_of(&e))))?;
    let text = text.as_string().ok_or_else(|| JsError::new("config: could not be read as JSON"))?;
    Config::from_json(&text).map_err(core)
}

/// A core error as a JS `Error` whose message starts with the field path.
pub fn core(e: ConfigError) -> JsError {
    JsError::new(&e.to_string())
}

/// A finite number, or an error naming `name`.
pub fn number(value: &JsValue, name: &str) -> Result<f64, JsError> {
    match value.as_f64() {
        Some(v) if v.is_finite() => Ok(v),
        Some(_) => Err(JsError::new(&format!("{name}: expected a finite number, got {}", describe(value)))),
        None => Err(JsError::new(&format!("{name}: expected a number, got {}", describe(value)))),
    }
}

/// `undefined`/`null` as `None`, else a finite number.
pub fn optional_number(value: &JsValue, name: &str) -> Result<Option<f64>, JsError> {
    if value.is_undefined() || value.is_null() { Ok(None) } else { number(value, name).map(Some) }
}

/// A boolean (only `true` or `false`), or an error naming `name`.
pub fn boolean(value: &JsValue, name: &str) -> Result<bool, JsError> {
    value.as_bool().ok_or_else(|| JsError::new(&format!("{name}: expected true or false, got {}", describe(value))))
}

/// A string, or an error naming `name`.
pub fn string(value: &JsValue, name: &str) -> Result<String, JsError> {
    value.as_string().ok_or_else(|| JsError::new(&format!("{name}: expected a string, got {}", describe(value))))
}

/// An array of finite numbers (at most `max` of them), or an error naming `name` and the index.
pub fn numbers(value: &JsValue, name: &str, max: usize) -> Result<Vec<f64>, JsError> {
    if !js_sys::Array::is_array(value) {
        return Err(JsError::new(&format!("{name}: expected an array of numbers, got {}", describe(value))));
    }
    let array: &js_sys::Array = value.unchecked_ref();
    let len = array.length() as usize;
    if len > max {
        return Err(JsError::new(&format!("{name}: at most {max} values, got {len}")));
    }
    (0..len).map(|i| number(&array.get(i as u32), &format!("{name}[{i}]"))).collect()
}

/// A `<canvas>` element, or an error naming `name`.
pub fn canvas(value: &JsValue, name: &str) -> Result<HtmlCanvasElement, JsError> {
    value
        .dyn_ref::<HtmlCanvasElement>()
        .cloned()
        .ok_or_else(|| JsError::new(&format!("{name}: expected a <canvas> element, got {}", describe(value))))
}

/// What a JS value is, in a few words, for messages (never Rust's debug text).
fn describe(value: &JsValue) -> String {
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
    } else if js_sys::Array::is_array(value) {
        "an array".into()
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
    match thrown.dyn_ref::<js_sys::Error>() {
        Some(e) => e.message().as_string().unwrap_or_default(),
        None => thrown.as_string().unwrap_or_else(|| describe(thrown)),
    }
}

//! Reads a config from the page: a plain copy of a JS object, taken into a [`Node`] tree by one
//! small function, then read by the core's own serde schema through [`Reader`], a deserializer
//! that knows where it is, so every error names the field (`engine.max_num_seqs`,
//! `workload.prompt_tokens.dist`) and says what is wrong in serde's words, as the CLI does.
//!
//! It stands in for serde-wasm-bindgen's deserializer wrapped in serde_path_to_error: the schema's
//! derived code is instantiated once, against a reader whose methods call only the visits their
//! type takes, instead of one that calls into JS for every value inside a second layer that
//! tracks the path: about 5.6 KB gzipped off the page.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

/// How deep a value may nest: a config is four levels deep; anything past this is an error, not a
/// recursion a hostile page could make as deep as it likes.
const MAX_DEPTH: usize = 32;

/// A JSON value, as a plain copy of a JS value holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<Node>),
    /// Keys in the object's own order.
    Object(Vec<(String, Node)>),
    /// A value nested past [`MAX_DEPTH`], refused where it is read.
    TooDeep,
}

impl Node {
    /// The tree of a plain copy (the result of `JSON.parse`): `undefined` reads as null.
    pub fn of(value: &wasm_bindgen::JsValue) -> Node {
        Node::at_depth(value, 0)
    }

    fn at_depth(value: &wasm_bindgen::JsValue, depth: usize) -> Node {
        use wasm_bindgen::JsCast;
        if depth > MAX_DEPTH {
            return Node::TooDeep;
        }
        if let Some(b) = value.as_bool() {
            Node::Bool(b)
        } else if let Some(n) = value.as_f64() {
            Node::Number(n)
        } else if let Some(s) = value.as_string() {
            Node::Text(s)
        } else if js_sys::Array::is_array(value) {
            let array: &js_sys::Array = value.unchecked_ref();
            Node::List(array.iter().map(|v| Node::at_depth(&v, depth + 1)).collect())
        } else if value.is_object() {
            let entries = js_sys::Object::entries(value.unchecked_ref());
            let entry = |pair: wasm_bindgen::JsValue| {
                let pair: js_sys::Array = pair.unchecked_into();
                (pair.get(0).as_string().unwrap_or_default(), Node::at_depth(&pair.get(1), depth + 1))
            };
            Node::Object(entries.iter().map(entry).collect())
        } else {
            Node::Null
        }
    }

    /// Reads `T` from the tree; an error names the field it happened at.
    pub fn read<T: de::DeserializeOwned>(&self) -> Result<T, ReadError> {
        T::deserialize(Reader { node: self, at: &Place::Root })
    }
}

/// Where a value sits: a chain of keys and indices from the root, written out only for an error.
enum Place<'a> {
    Root,
    Key(&'a Place<'a>, &'a str),
    Index(&'a Place<'a>, usize),
}

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Root => Ok(()),
            Place::Key(Place::Root, key) => f.write_str(key),
            Place::Key(parent, key) => write!(f, "{parent}.{key}"),
            Place::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// What went wrong, and the field it went wrong at (empty for the whole value).
#[derive(Debug, PartialEq)]
pub struct ReadError {
    pub path: String,
    pub message: String,
    /// Whether `path` is set yet: the innermost reader to see the error names the place.
    placed: bool,
}

impl ReadError {
    fn placed_at(mut self, place: &Place<'_>) -> ReadError {
        if !self.placed {
            self.path = place.to_string();
            self.placed = true;
        }
        self
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ReadError {}

impl de::Error for ReadError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        ReadError { path: String::new(), message: message.to_string(), placed: false }
    }

    /// serde's words, but JSON's `null` for what serde calls a unit value (as serde_json says it).
    fn invalid_type(unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        match unexpected {
            de::Unexpected::Unit => de::Error::custom(format_args!("invalid type: null, expected {expected}")),
            _ => de::Error::custom(format_args!("invalid type: {unexpected}, expected {expected}")),
        }
    }
}

/// Reads one node at one place.
struct Reader<'a> {
    node: &'a Node,
    at: &'a Place<'a>,
}

impl<'a> Reader<'a> {
    /// What the node is, in serde's words for an error.
    fn unexpected(&self) -> de::Unexpected<'_> {
        match self.node {
            Node::Null => de::Unexpected::Unit,
            Node::Bool(b) => de::Unexpected::Bool(*b),
            Node::Number(n) => match whole(*n) {
                Some(Whole::Unsigned(u)) => de::Unexpected::Unsigned(u),
                Some(Whole::Signed(i)) => de::Unexpected::Signed(i),
                None => de::Unexpected::Float(*n),
            },
            Node::Text(s) => de::Unexpected::Str(s),
            Node::List(_) => de::Unexpected::Seq,
            Node::Object(_) => de::Unexpected::Map,
            Node::TooDeep => de::Unexpected::Other("a value nested too deeply"),
        }
    }

    /// The error for a node of the wrong type, placed here.
    fn wrong(&self, expected: &dyn de::Expected) -> ReadError {
        let error = match self.node {
            Node::TooDeep => de::Error::custom(format_args!("nested more than {MAX_DEPTH} levels deep")),
            _ => de::Error::invalid_type(self.unexpected(), expected),
        };
        ReadError::placed_at(error, self.at)
    }

    fn items(&self, items: &'a [Node]) -> Items<'a> {
        Items { items: items.iter(), index: 0, at: self.at }
    }
}

/// A whole number, as serde_json reads one: unsigned if it is not negative.
enum Whole {
    Unsigned(u64),
    Signed(i64),
}

fn whole(n: f64) -> Option<Whole> {
    if n.fract() != 0.0 {
        None
    } else if (0.0..18_446_744_073_709_551_616.0).contains(&n) {
        Some(Whole::Unsigned(n as u64))
    } else if (-9_223_372_036_854_775_808.0..0.0).contains(&n) {
        Some(Whole::Signed(n as i64))
    } else {
        None
    }
}

/// Methods whose type takes one kind of node: its value visited, anything else a type error.
macro_rules! one_kind {
    ($($method:ident: $node:pat => $visit:ident($value:expr)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            match self.node {
                $node => visitor.$visit($value).map_err(|e: ReadError| e.placed_at(self.at)),
                _ => Err(self.wrong(&visitor)),
            }
        }
    )*};
}

/// Integer methods that read as [`Reader::deserialize_u64`] does (the visitor checks its range).
macro_rules! whole_numbers_as_u64 {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            self.deserialize_u64(visitor)
        }
    )*};
}

/// Each method calls only the visits its type takes (a number as an integer or a float, a
/// string, an object...), so the schema's derived visitors are not instantiated for every kind
/// of value; anything else is a type error placed at this node.
impl<'de> de::Deserializer<'de> for Reader<'_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        let at = self.at;
        match self.node {
            Node::Null => visitor.visit_unit(),
            Node::Bool(b) => visitor.visit_bool(*b),
            Node::Number(_) => return self.deserialize_f64(visitor),
            Node::Text(s) => visitor.visit_str(s),
            Node::List(items) => visitor.visit_seq(self.items(items)),
            Node::Object(_) => return self.deserialize_map(visitor),
            Node::TooDeep => return Err(self.wrong(&visitor)),
        }
        .map_err(|e: ReadError| e.placed_at(at))
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.node {
            Node::Number(n) => match whole(*n) {
                // The visitor checks its own type's range ("invalid value: integer `-1`, expected u32").
                Some(Whole::Unsigned(u)) => visitor.visit_u64(u),
                Some(Whole::Signed(i)) => visitor.visit_i64(i),
                None => visitor.visit_f64(*n),
            }
            .map_err(|e: ReadError| e.placed_at(self.at)),
            _ => Err(self.wrong(&visitor)),
        }
    }

    one_kind! {
        deserialize_bool: Node::Bool(b) => visit_bool(*b),
        deserialize_f64: Node::Number(n) => visit_f64(*n),
        deserialize_str: Node::Text(s) => visit_str(s),
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        let at = self.at;
        match self.node {
            Node::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
        .map_err(|e: ReadError| e.placed_at(at))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.node {
            Node::List(items) => visitor.visit_seq(self.items(items)).map_err(|e: ReadError| e.placed_at(self.at)),
            _ => Err(self.wrong(&visitor)),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.node {
            Node::Object(entries) => visitor
                .visit_map(Entries { entries: entries.iter(), value: None, at: self.at })
                .map_err(|e: ReadError| e.placed_at(self.at)),
            _ => Err(self.wrong(&visitor)),
        }
    }

    /// A struct is read only from an object, never from a list of its fields in order (which
    /// serde's derive would take, and the CLI refuses too): no struct's `visit_seq` is reached,
    /// so none is compiled in (about 3.7 KB of gzipped wasm).
    fn deserialize_struct<V: Visitor<'de>>(self, _: &str, _: &[&str], visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(self, _: &str, _: &[&str], visitor: V) -> Result<V::Value, ReadError> {
        match self.node {
            // The schema's enums are words ("open", "lognormal"): a string names the variant.
            Node::Text(s) => {
                visitor.visit_enum(s.as_str().into_deserializer()).map_err(|e: ReadError| e.placed_at(self.at))
            }
            _ => Err(self.wrong(&visitor)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        i128 u128 f32 char bytes byte_buf unit unit_struct newtype_struct tuple tuple_struct
    }

    whole_numbers_as_u64! { deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_u8 deserialize_u16 deserialize_u32 }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_str(visitor)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_str(visitor)
    }
}

/// An array's items, each read at its index.
struct Items<'a> {
    items: std::slice::Iter<'a, Node>,
    index: usize,
    at: &'a Place<'a>,
}

impl<'de> de::SeqAccess<'de> for Items<'_> {
    type Error = ReadError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, ReadError> {
        let Some(node) = self.items.next() else { return Ok(None) };
        let at = Place::Index(self.at, self.index);
        self.index += 1;
        seed.deserialize(Reader { node, at: &at }).map(Some)
    }
}

/// An object's entries: each key read as a field name (an unknown one is an error at that key),
/// then its value at that key.
struct Entries<'a> {
    entries: std::slice::Iter<'a, (String, Node)>,
    value: Option<&'a (String, Node)>,
    at: &'a Place<'a>,
}

impl<'de> de::MapAccess<'de> for Entries<'_> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ReadError> {
        let Some(entry) = self.entries.next() else { return Ok(None) };
        self.value = Some(entry);
        let key: de::value::StrDeserializer<'_, ReadError> = entry.0.as_str().into_deserializer();
        seed.deserialize(key).map(Some).map_err(|e: ReadError| e.placed_at(&Place::Key(self.at, &entry.0)))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        let (key, node) = self.value.take().expect("serde asks for a value after its key");
        seed.deserialize(Reader { node, at: &Place::Key(self.at, key) })
    }
}

#[cfg(test)]
mod tests {
    use kneelab_sim::Config;

    use super::*;

    /// The tree of a JSON text, as `Node::of` takes it from a JS object.
    fn node(json: &serde_json::Value) -> Node {
        match json {
            serde_json::Value::Null => Node::Null,
            serde_json::Value::Bool(b) => Node::Bool(*b),
            serde_json::Value::Number(n) => Node::Number(n.as_f64().expect("a finite number")),
            serde_json::Value::String(s) => Node::Text(s.clone()),
            serde_json::Value::Array(items) => Node::List(items.iter().map(node).collect()),
            serde_json::Value::Object(map) => Node::Object(map.iter().map(|(k, v)| (k.clone(), node(v))).collect()),
        }
    }

    fn read(json: &str) -> Result<Config, ReadError> {
        node(&serde_json::from_str(json).expect("valid JSON")).read()
    }

    #[test]
    fn every_example_reads_as_the_cli_reads_it() {
        let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut read_any = 0;
        for entry in std::fs::read_dir(examples).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            // The fleet's schema is another type; a day's traffic curve is the CLI's alone.
            let Ok(cli) = Config::from_json(&text) else { continue };
            assert_eq!(read(&text).unwrap(), cli, "{}", path.display());
            read_any += 1;
        }
        assert!(read_any >= 6, "read {read_any} examples");
    }

    #[test]
    fn an_error_names_its_field_and_says_what_the_cli_says() {
        // [config, path, the start of the message]; the CLI prints the same path and words.
        let rows = [
            (r#"{"engine": {"max_num_seq": 1}}"#, "engine.max_num_seq", "unknown field `max_num_seq`, expected one of"),
            (r#"{"seed": "x"}"#, "seed", "invalid type: string \"x\", expected u64"),
            (r#"{"cost": {"model": 5}}"#, "cost.model", "invalid type: integer `5`, expected"),
            (r#"{"cost": {"model": "magic"}}"#, "cost.model", "unknown variant `magic`, expected"),
            (r#"{"engine": {"max_num_seqs": 1.5}}"#, "engine.max_num_seqs", "invalid type: floating point `1.5`"),
            (r#"{"engine": {"max_num_seqs": -1}}"#, "engine.max_num_seqs", "invalid value: integer `-1`, expected u32"),
            (r#"{"engine": {"max_num_seqs": 1e10}}"#, "engine.max_num_seqs", "invalid value: integer `10000000000`"),
            (r#"{"engine": {"max_num_seqs": null}}"#, "engine.max_num_seqs", "invalid type: null, expected u32"),
            (r#"{"engine": 5}"#, "engine", "invalid type: integer `5`, expected struct EngineConfig"),
            (r#"{"workload": {"prompt_tokens": {"value": 5}}}"#, "workload.prompt_tokens", "missing field `dist`"),
            (r#"{"load": {"mode": "open", "offered_load": "0.5"}}"#, "load.offered_load", "invalid type: string"),
            (r#"{"slo": {"knee": ["p99"]}}"#, "slo.knee", "invalid type: sequence"),
            (r#"{"x": 1}"#, "x", "unknown field `x`"),
            (r#"{"slo": [2000, 200, "p99"]}"#, "slo", "invalid type: sequence, expected struct SloConfig"),
            (
                r#"{"workload": {"prompt_tokens": ["lognormal", 8]}}"#,
                "workload.prompt_tokens",
                "invalid type: sequence",
            ),
        ];
        for (json, path, start) in rows {
            let err = read(json).expect_err(json);
            assert_eq!(err.path, path, "{json}: {}", err.message);
            assert!(err.message.starts_with(start), "{json}: {}", err.message);
            let cli = Config::from_json(json).expect_err(json);
            assert_eq!(cli.path, path, "the CLI names the same field for {json}");
        }
    }

    #[test]
    fn an_optional_field_reads_null_as_absent_and_a_list_names_its_index() {
        let config = read(r#"{"seed": 7, "load": {"mode": "open", "rate_rps": 2, "burstiness": null}}"#).unwrap();
        assert_eq!((config.seed, config.load.burstiness, config.load.rate_rps), (7, None, Some(2.0)));
        let items = Node::List(vec![Node::Number(1.0), Node::Text("x".into())]);
        let err = items.read::<Vec<f64>>().unwrap_err();
        assert_eq!((err.path.as_str(), err.message.as_str()), ("[1]", "invalid type: string \"x\", expected f64"));
    }

    #[test]
    fn a_value_nested_past_the_limit_is_an_error_where_it_sits() {
        let mut deep = Node::TooDeep;
        for _ in 0..3 {
            deep = Node::List(vec![deep]);
        }
        let config = Node::Object(vec![("engine".into(), Node::Object(vec![("max_num_seqs".into(), deep)]))]);
        let err = config.read::<Config>().unwrap_err();
        assert_eq!(err.path, "engine.max_num_seqs");
        assert!(err.message.starts_with("invalid type: sequence"), "{}", err.message);
        let err = Node::TooDeep.read::<Config>().unwrap_err();
        assert_eq!((err.path.as_str(), err.message.as_str()), ("", "nested more than 32 levels deep"));
    }
}

//! Reading TOML into cudalint's types: the knowledge under `rules/` (built in, and a user's
//! `--knowledge` files) and `.cudalint.toml`. A type derives [`FromToml`] (`cudalint-derive`) and
//! reads from the parsed tree, where every value keeps its span, so every error names the line of
//! the value it is about.
//!
//! Why not serde: serde's derive writes a visitor for each type, which is compiled together with
//! the deserializer's own code, per type: 1.34 MB of the release binary for the knowledge's 150
//! types (issue 22), for code that runs once at start-up. Here a type's reader is a list of calls
//! to the few functions below ([`Table::required`], …), which every type shares.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

pub use cudalint_derive::FromToml;

/// A parsed TOML value and the bytes of the text it was read from.
pub type Node<'i> = Spanned<DeValue<'i>>;

/// A value that is not what its reader expects, or text that is not TOML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TomlError {
    /// The bytes of the value (or key) it is about; `None` for a fact about several values.
    pub span: Option<Range<usize>>,
    pub message: String,
}

impl TomlError {
    pub fn at(span: Range<usize>, message: impl Into<String>) -> TomlError {
        TomlError {
            span: Some(span),
            message: message.into(),
        }
    }

    /// An error no single value's span locates (a check across entries).
    pub fn unlocated(message: impl Into<String>) -> TomlError {
        TomlError {
            span: None,
            message: message.into(),
        }
    }

    /// 1-based line and column (in characters) of the error in `text`, the text parsed.
    pub fn line_col(&self, text: &str) -> Option<(usize, usize)> {
        self.span.as_ref().map(|span| line_col(text, span.start))
    }

    /// The message, after "line L, column C: " where the error is located in `text`.
    pub fn located(&self, text: &str) -> String {
        match self.line_col(text) {
            Some((line, column)) => format!("line {line}, column {column}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

impl fmt::Display for TomlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TomlError {}

/// A type read from a TOML value.
pub trait FromToml: Sized {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError>;
}

/// Parses a TOML document into its root table.
pub fn parse(text: &str) -> Result<Node<'_>, TomlError> {
    let table = DeTable::parse(text).map_err(|error| TomlError {
        span: error.span(),
        message: error.message().trim_end().to_string(),
    })?;
    let span = table.span();
    Ok(Spanned::new(span, DeValue::Table(table.into_inner())))
}

/// Parses a TOML document and reads it as a `T`.
pub fn from_str<T: FromToml>(text: &str) -> Result<T, TomlError> {
    T::from_toml(&parse(text)?)
}

/// A TOML table being read as a struct.
pub struct Table<'a, 'i> {
    node: &'a Node<'i>,
    entries: &'a DeTable<'i>,
}

impl<'a, 'i> Table<'a, 'i> {
    /// `node` as a table; `what` names the type expected, for the error.
    pub fn new(node: &'a Node<'i>, what: &str) -> Result<Table<'a, 'i>, TomlError> {
        match node.get_ref() {
            DeValue::Table(entries) => Ok(Table { node, entries }),
            _ => Err(invalid_type(node, &format!("a table ({what})"))),
        }
    }

    pub fn get(&self, key: &str) -> Option<&'a Node<'i>> {
        self.entries.get(key)
    }

    /// The keys, with their spans, in the table's order.
    pub fn keys(&self) -> impl Iterator<Item = &'a Spanned<Cow<'i, str>>> {
        self.entries.keys()
    }

    pub fn required<T: FromToml>(&self, key: &str) -> Result<T, TomlError> {
        match self.get(key) {
            Some(node) => T::from_toml(node),
            None => Err(TomlError::at(
                self.node.span(),
                format!("missing field `{key}`"),
            )),
        }
    }

    pub fn optional<T: FromToml>(&self, key: &str) -> Result<Option<T>, TomlError> {
        self.get(key).map(T::from_toml).transpose()
    }

    pub fn or_default<T: FromToml + Default>(&self, key: &str) -> Result<T, TomlError> {
        Ok(self.optional(key)?.unwrap_or_default())
    }

    pub fn or_else<T: FromToml>(&self, key: &str, default: fn() -> T) -> Result<T, TomlError> {
        Ok(self.optional(key)?.unwrap_or_else(default))
    }

    /// An error at the first key not in `known` (serde's wording).
    pub fn deny_unknown(&self, known: &[&str]) -> Result<(), TomlError> {
        match self
            .keys()
            .find(|key| !known.contains(&key.get_ref().as_ref()))
        {
            Some(key) => Err(TomlError::at(
                key.span(),
                format!(
                    "unknown field `{}`, {}",
                    key.get_ref(),
                    expected_one_of(known)
                ),
            )),
            None => Ok(()),
        }
    }
}

/// `node`'s text, or an error if it is not a string.
pub fn string<'a>(node: &'a Node<'_>) -> Result<&'a str, TomlError> {
    match node.get_ref() {
        DeValue::String(text) => Ok(text),
        _ => Err(invalid_type(node, "a string")),
    }
}

/// The error for a string that names none of an enum's `variants` (serde's wording).
pub fn unknown_variant(node: &Node<'_>, text: &str, variants: &[&str]) -> TomlError {
    let expected = match variants {
        [] => "there are no variants".to_string(),
        _ => expected_one_of(variants),
    };
    TomlError::at(node.span(), format!("unknown variant `{text}`, {expected}"))
}

/// "invalid type: integer `3`, expected a string", as serde says it.
pub fn invalid_type(node: &Node<'_>, expected: &str) -> TomlError {
    let found = match node.get_ref() {
        DeValue::String(text) => format!("string {text:?}"),
        DeValue::Integer(integer) => format!("integer `{integer}`"),
        DeValue::Float(float) => format!("floating point `{float}`"),
        DeValue::Boolean(value) => format!("boolean `{value}`"),
        DeValue::Datetime(datetime) => format!("datetime `{datetime}`"),
        DeValue::Array(_) => "array".to_string(),
        DeValue::Table(_) => "table".to_string(),
    };
    TomlError::at(
        node.span(),
        format!("invalid type: {found}, expected {expected}"),
    )
}

fn expected_one_of(names: &[&str]) -> String {
    match names {
        [] => "there are no fields".to_string(),
        [one] => format!("expected `{one}`"),
        [first, second] => format!("expected `{first}` or `{second}`"),
        _ => {
            let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
            format!("expected one of {}", quoted.join(", "))
        }
    }
}

impl FromToml for String {
    /// A string, or a date as written (`checked = 2026-11-25` read into a `String`), as serde
    /// reads one.
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        match node.get_ref() {
            DeValue::Datetime(datetime) => Ok(datetime.to_string()),
            _ => string(node).map(str::to_string),
        }
    }
}

impl FromToml for bool {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        match node.get_ref() {
            DeValue::Boolean(value) => Ok(*value),
            _ => Err(invalid_type(node, "a boolean")),
        }
    }
}

/// An integer value, as wide as TOML's (64 bits, signed) and then some.
fn integer(node: &Node<'_>, expected: &str) -> Result<i128, TomlError> {
    match node.get_ref() {
        DeValue::Integer(integer) => i128::from_str_radix(integer.as_str(), integer.radix())
            .map_err(|_| invalid_type(node, expected)),
        _ => Err(invalid_type(node, expected)),
    }
}

macro_rules! integer_from_toml {
    ($($ty:ty => $expected:literal),* $(,)?) => {$(
        impl FromToml for $ty {
            fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
                let value = integer(node, $expected)?;
                <$ty>::try_from(value).map_err(|_| {
                    TomlError::at(node.span(), format!("integer `{value}` out of range for {}", $expected))
                })
            }
        }
    )*};
}

integer_from_toml!(
    u8 => "u8",
    u16 => "u16",
    u32 => "u32",
    u64 => "u64",
    usize => "usize",
    i32 => "i32",
    i64 => "i64",
);

impl FromToml for f64 {
    /// A float, or an integer (`share = 1`), as serde reads one.
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        match node.get_ref() {
            DeValue::Float(float) => float
                .as_str()
                .parse()
                .map_err(|_| invalid_type(node, "a float")),
            DeValue::Integer(_) => Ok(integer(node, "a float")? as f64),
            _ => Err(invalid_type(node, "a float")),
        }
    }
}

impl FromToml for toml::value::Datetime {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        match node.get_ref() {
            DeValue::Datetime(datetime) => Ok(*datetime),
            _ => Err(invalid_type(node, "a date")),
        }
    }
}

impl<T: FromToml> FromToml for Vec<T> {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        match node.get_ref() {
            DeValue::Array(items) => items.iter().map(T::from_toml).collect(),
            _ => Err(invalid_type(node, "an array")),
        }
    }
}

/// The items of an array of exactly `length` values (a tuple or a fixed-size array).
fn items<'a, 'i>(node: &'a Node<'i>, length: usize) -> Result<&'a [Node<'i>], TomlError> {
    match node.get_ref() {
        DeValue::Array(items) if items.len() == length => Ok(items),
        DeValue::Array(items) => Err(TomlError::at(
            node.span(),
            format!(
                "invalid length {}, expected an array of {length}",
                items.len()
            ),
        )),
        _ => Err(invalid_type(node, &format!("an array of {length}"))),
    }
}

impl<A: FromToml, B: FromToml> FromToml for (A, B) {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        let items = items(node, 2)?;
        Ok((A::from_toml(&items[0])?, B::from_toml(&items[1])?))
    }
}

impl<T: FromToml, const N: usize> FromToml for [T; N] {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        let items: Vec<T> = items(node, N)?
            .iter()
            .map(T::from_toml)
            .collect::<Result<_, _>>()?;
        Ok(items
            .try_into()
            .unwrap_or_else(|_| unreachable!("items() checked the length")))
    }
}

impl<T: FromToml> FromToml for Option<T> {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        T::from_toml(node).map(Some)
    }
}

impl<T: FromToml> FromToml for Spanned<T> {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        Ok(Spanned::new(node.span(), T::from_toml(node)?))
    }
}

/// A table's key read as a map's key.
pub trait FromTomlKey: Sized {
    fn from_key(key: &Spanned<Cow<'_, str>>) -> Self;
}

impl FromTomlKey for String {
    fn from_key(key: &Spanned<Cow<'_, str>>) -> Self {
        key.get_ref().to_string()
    }
}

impl FromTomlKey for Spanned<String> {
    fn from_key(key: &Spanned<Cow<'_, str>>) -> Self {
        Spanned::new(key.span(), key.get_ref().to_string())
    }
}

impl<K: FromTomlKey + Ord, V: FromToml> FromToml for BTreeMap<K, V> {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        match node.get_ref() {
            DeValue::Table(entries) => entries
                .iter()
                .map(|(key, value)| Ok((K::from_key(key), V::from_toml(value)?)))
                .collect(),
            _ => Err(invalid_type(node, "a table")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, FromToml)]
    #[toml(deny_unknown_fields)]
    struct Entry {
        name: String,
        size: u32,
        #[toml(default)]
        tags: Vec<String>,
        note: Option<String>,
        #[toml(rename = "kind")]
        manager: Manager,
    }

    #[derive(Debug, PartialEq, FromToml)]
    #[toml(rename_all = "kebab-case")]
    enum Manager {
        AptGet,
        Pip,
    }

    fn line_of(text: &str, error: &TomlError) -> usize {
        let start = error.span.clone().expect("located").start;
        text[..start].matches('\n').count() + 1
    }

    #[test]
    fn reads_fields_defaults_and_renames() {
        let entry: Entry = from_str("name = \"x\"\nsize = 0x10\nkind = \"apt-get\"\n").unwrap();
        assert_eq!(
            entry,
            Entry {
                name: "x".into(),
                size: 16,
                tags: vec![],
                note: None,
                manager: Manager::AptGet,
            }
        );
    }

    #[test]
    fn errors_are_located_at_the_value_they_are_about() {
        let text = "name = \"x\"\nsize = 1\nkind = \"pip\"\nsiez = 2\n";
        let error = from_str::<Entry>(text).unwrap_err();
        assert_eq!(line_of(text, &error), 4);
        assert!(error
            .message
            .starts_with("unknown field `siez`, expected one of `name`"));

        let text = "name = \"x\"\nsize = \"big\"\nkind = \"pip\"\n";
        let error = from_str::<Entry>(text).unwrap_err();
        assert_eq!(line_of(text, &error), 2);
        assert_eq!(error.message, "invalid type: string \"big\", expected u32");

        let text = "name = \"x\"\nsize = -1\nkind = \"pip\"\n";
        let error = from_str::<Entry>(text).unwrap_err();
        assert_eq!(error.message, "integer `-1` out of range for u32");

        let text = "name = \"x\"\nsize = 1\nkind = \"conda\"\n";
        let error = from_str::<Entry>(text).unwrap_err();
        assert_eq!(line_of(text, &error), 3);
        assert_eq!(
            error.message,
            "unknown variant `conda`, expected `apt-get` or `pip`"
        );

        let error = from_str::<Entry>("name = \"x\"\nkind = \"pip\"\n").unwrap_err();
        assert_eq!(error.message, "missing field `size`");

        let text = "size = 1\nname = \"x\n";
        let error = from_str::<Entry>(text).unwrap_err();
        assert_eq!(line_of(text, &error), 2, "{error}");
    }

    #[test]
    fn reads_maps_floats_and_spans() {
        let node = parse("[a]\nb = 1\nc = 2.5\n").unwrap();
        let table = Table::new(&node, "test").unwrap();
        let map: BTreeMap<Spanned<String>, f64> = table.required("a").unwrap();
        let values: Vec<(String, f64, usize)> = map
            .iter()
            .map(|(key, value)| (key.get_ref().clone(), *value, key.span().start))
            .collect();
        assert_eq!(values, [("b".into(), 1.0, 4), ("c".into(), 2.5, 10)]);
    }
}

//! Runtime values of the language: the [`Value`] enum, attribute sets kept
//! sorted by name (Nix's iteration order), lists of lazy elements, closures
//! and partially applied builtins. Cloning a value is cheap (reference counts).

use std::rc::Rc;

use crate::builtins::BuiltinId;
use crate::env::Env;
use crate::ir::{AttrsDef, Lambda};
use crate::source::Span;
use crate::thunk::Thunk;

pub type NixString = Rc<str>;

#[derive(Clone)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(NixString),
    /// A normalised absolute path, or one below the virtual `<kdeploy>` root.
    Path(NixString),
    List(List),
    Attrs(Rc<Attrs>),
    Lambda(Rc<Closure>),
    Builtin(Rc<PartialBuiltin>),
}

pub type List = Rc<[Thunk]>;

pub struct Closure {
    pub lambda: Rc<Lambda>,
    pub env: Rc<Env>,
}

/// A builtin that has received fewer arguments than it takes.
pub struct PartialBuiltin {
    pub id: BuiltinId,
    pub args: Vec<Thunk>,
}

impl Value {
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::String(_) => "string",
            Value::Path(_) => "path",
            Value::List(_) => "list",
            Value::Attrs(_) => "set",
            Value::Lambda(_) | Value::Builtin(_) => "lambda",
        }
    }

    /// How Nix's error messages name a type ("a string", "an integer").
    pub fn type_article(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a Boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::String(_) => "a string",
            Value::Path(_) => "a path",
            Value::List(_) => "a list",
            Value::Attrs(_) => "a set",
            Value::Lambda(_) => "a function",
            Value::Builtin(_) => "a built-in function",
        }
    }

    pub fn string(s: impl Into<NixString>) -> Value {
        Value::String(s.into())
    }

    pub fn list(items: Vec<Thunk>) -> Value {
        Value::List(items.into())
    }

    pub fn attrs(a: Attrs) -> Value {
        Value::Attrs(Rc::new(a))
    }

    pub fn is_function(&self) -> bool {
        matches!(self, Value::Lambda(_) | Value::Builtin(_))
    }
}

/// An attribute set: entries sorted by name, no duplicates.
#[derive(Clone, Default)]
pub struct Attrs {
    entries: Vec<(NixString, Thunk)>,
    /// The literal that built this set, for `unsafeGetAttrPos`.
    origin: Option<Rc<AttrsDef>>,
}

impl Attrs {
    pub fn new() -> Attrs {
        Attrs { entries: Vec::new(), origin: None }
    }

    /// Builds from entries in any order; on duplicate names the last wins.
    pub fn from_unsorted(mut entries: Vec<(NixString, Thunk)>) -> Attrs {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        // Keep the last of equal names: dedup keeps the first, so reverse around it.
        entries.reverse();
        entries.dedup_by(|a, b| a.0 == b.0);
        entries.reverse();
        Attrs { entries, origin: None }
    }

    /// Builds from entries already sorted by name without duplicates.
    pub fn from_sorted(entries: Vec<(NixString, Thunk)>) -> Attrs {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        Attrs { entries, origin: None }
    }

    pub fn get(&self, name: &str) -> Option<&Thunk> {
        self.entries.binary_search_by(|(k, _)| k.as_ref().cmp(name)).ok().map(|i| &self.entries[i].1)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&NixString, &Thunk)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &NixString> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn into_entries(self) -> Vec<(NixString, Thunk)> {
        self.entries
    }

    /// `self // other`: a linear merge of two sorted sets, right side winning.
    pub fn update(&self, other: &Attrs) -> Attrs {
        let (a, b) = (&self.entries, &other.entries);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => {
                    out.push(a[i].clone());
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    out.push(b[j].clone());
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    out.push(b[j].clone());
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        let origin = if other.origin.is_some() { other.origin.clone() } else { self.origin.clone() };
        Attrs { entries: out, origin }
    }

    pub fn with_origin(mut self, def: Rc<AttrsDef>) -> Attrs {
        self.origin = Some(def);
        self
    }

    /// Where attribute `name` was defined, if this set came from a literal.
    pub fn position(&self, name: &str) -> Option<Span> {
        self.origin.as_ref()?.statics.iter().find(|s| &*s.name == name).map(|s| s.span)
    }
}

//! Typed reading of evaluated values: a serde `Deserializer` over a value
//! that forces each thunk when the target type asks for it. A front end gets
//! its own types straight from the evaluator — no JSON printed and parsed
//! back, no copy of a string the target does not keep, and nothing forced
//! that the target skips (`IgnoredAny`). Values map as `builtins.toJSON`
//! maps them (paths and sets with `__toString`/`outPath` are strings; a
//! set with one attribute is also an externally tagged enum variant).

use std::fmt;
use std::rc::Rc;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};

use crate::error::{ErrorExt, EvalError};
use crate::eval::{CoerceMode, Evaluator};
use crate::thunk::Thunk;
use crate::value::{Attrs, NixString, Value};

/// The name of a newtype struct whose value the decoder identifies: a
/// type deserialising itself as `deserialize_newtype_struct(SHARED, …)` is
/// visited with a sequence of two elements, the value's identity (a
/// `usize`, 0 for none) and the value, which it need not read. Within one
/// evaluator, equal identities are one set — the same allocation, which
/// cannot change — so a front end can decode once what many parts of a
/// result share (a phase every node of a group holds) and share the
/// decoded form too. Other deserialisers see a plain newtype struct.
pub const SHARED: &str = "$kdeploy_lang::decode::SHARED";

/// Typed data nests this deep at most; deeper is a value inside itself or
/// not data (serde recurses on the real stack, one level per container).
pub const MAX_DECODE_DEPTH: usize = 200;

/// Why a value could not be read as the wanted type.
#[derive(Debug)]
pub enum DecodeError {
    /// Forcing part of the value failed.
    Eval(Box<EvalError>),
    /// The value has another shape than the type wants (serde's message,
    /// with the attribute path to the place).
    Shape { path: String, message: String },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Eval(e) => write!(f, "{}", e.message),
            DecodeError::Shape { path, message } if path.is_empty() => write!(f, "{message}"),
            DecodeError::Shape { path, message } => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl de::Error for DecodeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DecodeError::Shape { path: String::new(), message: msg.to_string() }
    }
}

impl DecodeError {
    /// The error, one step further out: `step` is an attribute name or `[i]`.
    pub fn under(self, step: &str) -> Self {
        match self {
            // as printing the value to JSON words it (the renderer joins these into a path)
            DecodeError::Eval(e) if !step.starts_with('[') => {
                DecodeError::Eval(e.context(format!("while evaluating the attribute '{step}'"), None))
            }
            DecodeError::Shape { path, message } => {
                let sep = if path.is_empty() || path.starts_with('[') { "" } else { "." };
                DecodeError::Shape { path: format!("{step}{sep}{path}"), message }
            }
            e => e,
        }
    }
}

/// Reads `v` as a `T`, forcing what `T` needs.
pub fn decode<T: DeserializeOwned>(ev: &mut Evaluator, v: &Value) -> Result<T, DecodeError> {
    T::deserialize(ValueDe { ev, t: Thunk::value(v.clone()), depth: 0 })
}

/// A value not forced yet: the target type decides whether it is.
/// Reads the attributes `names` of the set `v` as `T`s and hands each to
/// `each`, in the order given, without keeping the attributes' values: each
/// is computed in a cell of its own and dropped once read, so reading a
/// thousand nodes holds one node's value at a time, plus what the nodes
/// share (computed once and kept as usual). A value that must not be
/// evaluated twice (a builtin's deferred call) is forced in place instead.
pub fn decode_each<T: DeserializeOwned>(
    ev: &mut Evaluator,
    v: &Value,
    names: &[String],
    mut each: impl FnMut(&str, T),
) -> Result<(), DecodeError> {
    let Value::Attrs(a) = v else {
        return Err(de::Error::custom(format!("expected a set, got {}", v.type_name())));
    };
    let entries: Vec<(&String, Thunk)> = names
        .iter()
        .map(|n| match a.get(n) {
            Some(t) => Ok((n, t.clone())),
            None => Err(de::Error::custom(format!("no attribute '{n}'"))),
        })
        .collect::<Result<_, DecodeError>>()?;
    for (name, t) in entries {
        let t = t.unshared().unwrap_or(t);
        let item = T::deserialize(ValueDe { ev: &mut *ev, t, depth: 1 }).map_err(|e| e.under(name))?;
        each(name, item);
    }
    Ok(())
}

struct ValueDe<'a> {
    ev: &'a mut Evaluator,
    t: Thunk,
    depth: usize,
}

fn eval_err(e: Box<EvalError>) -> DecodeError {
    DecodeError::Eval(e)
}

impl<'a> ValueDe<'a> {
    fn force(&mut self) -> Result<Value, DecodeError> {
        self.ev.force(&self.t).map_err(eval_err)
    }

    fn deeper(&self) -> Result<usize, DecodeError> {
        if self.depth >= MAX_DECODE_DEPTH {
            return Err(de::Error::custom(format!(
                "nested deeper than {MAX_DECODE_DEPTH} levels (a value inside itself?)"
            )));
        }
        Ok(self.depth + 1)
    }

    /// A set that converts to a string (`__toString`, `outPath`), as JSON would.
    fn as_string_set(&mut self, v: &Value, a: &Rc<Attrs>) -> Result<Option<String>, DecodeError> {
        if !(a.contains("__toString") || a.contains("outPath")) {
            return Ok(None);
        }
        let mut s = String::new();
        self.ev.coerce_to_string(v, CoerceMode::Interpolation, &mut s).map_err(eval_err)?;
        Ok(Some(s))
    }
}

impl<'de, 'a> de::Deserializer<'de> for ValueDe<'a> {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, DecodeError> {
        let v = self.force()?;
        match v.clone() {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Int(i) => visitor.visit_i64(i),
            Value::Float(f) => visitor.visit_f64(f),
            Value::String(s) | Value::Path(s) => visitor.visit_str(&s),
            Value::List(items) => {
                let depth = self.deeper()?;
                visitor.visit_seq(Items { ev: self.ev, items, next: 0, depth })
            }
            Value::Attrs(a) => {
                if let Some(s) = self.as_string_set(&v, &a)? {
                    return visitor.visit_string(s);
                }
                let depth = self.deeper()?;
                let entries = a.iter().map(|(k, t)| (k.clone(), t.clone())).collect();
                visitor.visit_map(Entries { ev: self.ev, entries, next: 0, depth })
            }
            Value::Lambda(_) | Value::Builtin(_) => Err(de::Error::custom("a function, where data was expected")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, DecodeError> {
        match self.force()? {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_unit()
    }

    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        match &self.force()? {
            Value::String(s) => visitor.visit_enum(s.to_string().into_deserializer()),
            Value::Attrs(a) if a.len() == 1 => {
                let (name, t) = a.iter().next().expect("one attribute");
                let (name, t) = (name.to_string(), t.clone());
                let depth = self.deeper()?;
                visitor.visit_enum(Variant { ev: self.ev, name, value: t, depth })
            }
            other => Err(de::Error::custom(format!(
                "expected a string or a set with one attribute, got {}",
                other.type_name()
            ))),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        mut self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        if name != SHARED {
            return visitor.visit_newtype_struct(self);
        }
        let id = match self.force()? {
            Value::Attrs(a) => {
                // Only the decoder holds weak references to sets: none yet
                // means this allocation is not kept yet.
                if Rc::weak_count(&a) == 0 {
                    self.ev.identities.push(Rc::downgrade(&a));
                }
                Rc::as_ptr(&a) as usize
            }
            _ => 0,
        };
        visitor.visit_seq(Identified { id: Some(id), value: Some(self) })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

struct Items<'a> {
    ev: &'a mut Evaluator,
    items: crate::value::List,
    next: usize,
    depth: usize,
}

impl<'de, 'a> de::SeqAccess<'de> for Items<'a> {
    type Error = DecodeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, DecodeError> {
        let Some(t) = self.items.get(self.next) else { return Ok(None) };
        let i = self.next;
        self.next += 1;
        seed.deserialize(ValueDe { ev: self.ev, t: t.clone(), depth: self.depth })
            .map(Some)
            .map_err(|e| e.under(&format!("[{i}]")))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.next)
    }
}

/// What a [`SHARED`] newtype is visited with: its identity, then the value.
struct Identified<'a> {
    id: Option<usize>,
    value: Option<ValueDe<'a>>,
}

impl<'de, 'a> de::SeqAccess<'de> for Identified<'a> {
    type Error = DecodeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, DecodeError> {
        if let Some(id) = self.id.take() {
            return seed.deserialize(id.into_deserializer()).map(Some);
        }
        // no step of its own in an error's path: the value is the newtype's
        self.value.take().map(|v| seed.deserialize(v)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.id.is_some() as usize + self.value.is_some() as usize)
    }
}

struct Entries<'a> {
    ev: &'a mut Evaluator,
    entries: Vec<(NixString, Thunk)>,
    next: usize,
    depth: usize,
}

impl<'de, 'a> de::MapAccess<'de> for Entries<'a> {
    type Error = DecodeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, DecodeError> {
        let Some((name, _)) = self.entries.get(self.next) else { return Ok(None) };
        seed.deserialize(de::value::StrDeserializer::<DecodeError>::new(name)).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, DecodeError> {
        let (name, t) = self.entries[self.next].clone();
        self.next += 1;
        seed.deserialize(ValueDe { ev: self.ev, t, depth: self.depth }).map_err(|e| e.under(&name))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next)
    }
}

struct Variant<'a> {
    ev: &'a mut Evaluator,
    name: String,
    value: Thunk,
    depth: usize,
}

impl<'de, 'a> de::EnumAccess<'de> for Variant<'a> {
    type Error = DecodeError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), DecodeError> {
        let tag = seed.deserialize(self.name.clone().into_deserializer())?;
        Ok((tag, self))
    }
}

impl<'de, 'a> de::VariantAccess<'de> for Variant<'a> {
    type Error = DecodeError;

    fn unit_variant(self) -> Result<(), DecodeError> {
        Err(de::Error::custom(format!("variant '{}' takes no value; give it as a string", self.name)))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DecodeError> {
        let name = self.name;
        seed.deserialize(ValueDe { ev: self.ev, t: self.value, depth: self.depth }).map_err(|e| e.under(&name))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DecodeError> {
        let name = self.name;
        de::Deserializer::deserialize_any(ValueDe { ev: self.ev, t: self.value, depth: self.depth }, visitor)
            .map_err(|e| e.under(&name))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        self.tuple_variant(0, visitor)
    }
}

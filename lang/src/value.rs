//! Runtime values of the language: the [`Value`] enum, attribute sets kept
//! sorted by name (Nix's iteration order; large ones also indexed by hash),
//! lists of lazy elements, closures and partially applied builtins. Cloning
//! a value is cheap (reference counts).

use std::cell::OnceCell;
use std::hash::BuildHasher;
use std::rc::Rc;

use hashbrown::HashTable;

use crate::builtins::BuiltinId;
use crate::env::Env;
use crate::ir::{AttrsDef, Lambda};
use crate::source::Span;
use crate::thin::{RcSlice, RcStr};
use crate::thunk::Thunk;

pub type NixString = RcStr;

/// `a + b` copied once, straight into the shared string: building a
/// `String` first and converting it would copy the (possibly long) result
/// twice more, which dominates a loop that appends to a string.
pub fn concat_strings(a: &str, b: &str) -> NixString {
    RcStr::concat(a, b)
}

/// A whole-word tag puts every payload at offset 8: values are then moved
/// and copied as whole words, not as the odd-sized pieces around a one-byte
/// tag that stall store forwarding on the evaluator's hot paths.
#[repr(u64)]
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

pub type List = RcSlice<Thunk>;

/// A copy of the words and, for a shared payload, one more count on its
/// `Rc`. The derived clone rebuilt each case on its own; this one is
/// small enough to inline into every thunk and slot read, and no worse
/// for a scalar than a copy.
impl Clone for Value {
    #[inline(always)]
    fn clone(&self) -> Value {
        match self {
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {}
            Value::String(s) | Value::Path(s) => std::mem::forget(s.clone()),
            Value::List(l) => std::mem::forget(l.clone()),
            Value::Attrs(a) => std::mem::forget(a.clone()),
            Value::Lambda(c) => std::mem::forget(c.clone()),
            Value::Builtin(b) => std::mem::forget(b.clone()),
        }
        // SAFETY: the copy owns the count just taken (none for a scalar),
        // so the original and the copy each drop one.
        unsafe { std::ptr::read(self) }
    }
}

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
///
/// A set made by `big // small` may keep `big` as a shared `base` and hold
/// only the overlay in `entries` (names in `entries` hide the same names in
/// `base`): a loop that adds a few names at a time to a large set then copies
/// the overlay, not the whole set, and flattens only once the overlay has
/// grown to about twice the square root of the base.
#[derive(Clone, Default)]
pub struct Attrs {
    entries: Vec<(NixString, Thunk)>,
    /// Always a flat set (no base of its own).
    base: Option<Rc<Attrs>>,
    /// Number of distinct names, base included.
    len: usize,
    /// The literal that built this set, for `unsafeGetAttrPos`.
    origin: Option<Rc<AttrsDef>>,
    /// Positions in `entries` by name hash, built on the first lookup in a
    /// large set: a binary search over 200000 names compares ~18 strings.
    index: OnceCell<Box<HashTable<u32>>>,
}

/// Smallest number of entries that gets a hash index.
const INDEX_MIN: usize = 128;

/// Smallest set kept as the base of an overlay; smaller ones are copied.
const MIN_BASE: usize = 64;

impl Attrs {
    pub fn new() -> Attrs {
        Attrs::default()
    }

    /// Builds from entries in any order; on duplicate names the last wins.
    pub fn from_unsorted(mut entries: Vec<(NixString, Thunk)>) -> Attrs {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        // Keep the last of equal names: dedup keeps the first, so reverse around it.
        entries.reverse();
        entries.dedup_by(|a, b| a.0 == b.0);
        entries.reverse();
        Attrs::from_sorted(entries)
    }

    /// Builds from entries already sorted by name without duplicates.
    pub fn from_sorted(entries: Vec<(NixString, Thunk)>) -> Attrs {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        Attrs { len: entries.len(), entries, base: None, origin: None, index: OnceCell::new() }
    }

    /// The value of `name`. A small flat set (most sets built by code) is
    /// scanned here, inline; the rest out of line.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Thunk> {
        if self.entries.len() <= 4 && self.base.is_none() {
            return self.entries.iter().find(|(k, _)| same_name(k, name)).map(|(_, v)| v);
        }
        self.get_general(name)
    }

    #[inline(never)]
    fn get_general(&self, name: &str) -> Option<&Thunk> {
        let found = if self.entries.len() >= INDEX_MIN { self.find_indexed(name) } else { find(&self.entries, name) };
        match found {
            Some(t) => Some(t),
            None => self.base.as_ref()?.get(name),
        }
    }

    fn find_indexed(&self, name: &str) -> Option<&Thunk> {
        let index = self.index.get_or_init(|| index_names(&self.entries));
        let i = index.find(hash_name(name), |&i| &*self.entries[i as usize].0 == name)?;
        Some(&self.entries[*i as usize].1)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> Iter<'_> {
        let base: &[(NixString, Thunk)] = match &self.base {
            Some(b) => &b.entries,
            None => &[],
        };
        Iter { base, overlay: &self.entries, remaining: self.len }
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &NixString> {
        self.iter().map(|(k, _)| k)
    }

    pub fn into_entries(self) -> Vec<(NixString, Thunk)> {
        match self.base {
            None => self.entries,
            Some(_) => self.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        }
    }

    /// `self // other` into `self` itself, for a set nobody else holds:
    /// no entry is copied. Meant for a small `other` (each insertion shifts).
    pub fn update_in_place(&mut self, other: &Attrs) {
        if self.base.is_some() || other.base.is_some() {
            *self = Rc::new(std::mem::take(self)).update(other);
            return;
        }
        let mut from = 0;
        for e in &other.entries {
            match self.entries[from..].binary_search_by(|(k, _)| k.as_ref().cmp(&*e.0)) {
                Ok(p) => {
                    self.entries[from + p].1 = e.1.clone();
                    from += p + 1;
                }
                Err(p) => {
                    self.entries.insert(from + p, e.clone());
                    from += p + 1;
                }
            }
        }
        self.len = self.entries.len();
        self.index = OnceCell::new();
        if other.origin.is_some() {
            self.origin = other.origin.clone();
        }
    }

    /// `self // other`: right side winning.
    pub fn update(self: &Rc<Attrs>, other: &Attrs) -> Attrs {
        let origin = if other.origin.is_some() { other.origin.clone() } else { self.origin.clone() };
        let small = other.base.is_none() && other.entries.len() * 8 < self.len;
        if small {
            let (base, overlay) = match &self.base {
                Some(b) => (b, &self.entries[..]),
                None => (self, &[][..]),
            };
            if base.len >= MIN_BASE {
                let added = other.entries.iter().filter(|(k, _)| !self.contains(k)).count();
                let entries = merge(overlay.iter().map(|(k, v)| (k, v)), other.iter(), overlay.len() + other.len);
                let len = self.len + added;
                if entries.len() * entries.len() <= 4 * base.len {
                    return Attrs { entries, base: Some(base.clone()), len, origin, index: OnceCell::new() };
                }
                let base_iter = base.entries.iter().map(|(k, v)| (k, v));
                let entries = merge(base_iter, entries.iter().map(|(k, v)| (k, v)), len);
                return Attrs { len: entries.len(), entries, base: None, origin, index: OnceCell::new() };
            }
        }
        let entries = merge(self.iter(), other.iter(), self.len + other.len);
        Attrs { len: entries.len(), entries, base: None, origin, index: OnceCell::new() }
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

/// The value of `name` in sorted entries. Small sets (most sets built by
/// code) are scanned: a name's length (in its block, beside its bytes)
/// rejects most names without a `memcmp`, which a binary search calls at
/// every probe.
#[inline]
fn find<'a>(entries: &'a [(NixString, Thunk)], name: &str) -> Option<&'a Thunk> {
    if entries.len() <= 8 {
        return entries.iter().find(|(k, _)| same_name(k, name)).map(|(_, v)| v);
    }
    entries
        .binary_search_by(
            |(k, _)| if k.as_ptr() == name.as_ptr() { k.len().cmp(&name.len()) } else { k.as_ref().cmp(name) },
        )
        .ok()
        .map(|i| &entries[i].1)
}

fn hash_name(name: &str) -> u64 {
    // Only lookups use the hash; the order of a set comes from `entries`.
    static HASHER: std::sync::LazyLock<hashbrown::DefaultHashBuilder> = std::sync::LazyLock::new(Default::default);
    HASHER.hash_one(name)
}

fn index_names(entries: &[(NixString, Thunk)]) -> Box<HashTable<u32>> {
    let mut index = HashTable::with_capacity(entries.len());
    for (i, (name, _)) in entries.iter().enumerate() {
        index.insert_unique(hash_name(name), i as u32, |&j| hash_name(&entries[j as usize].0));
    }
    Box::new(index)
}

/// Names written in the source are interned (`lower::intern`): the same
/// pointer is the same name, without comparing bytes.
#[inline(always)]
fn same_name(k: &str, name: &str) -> bool {
    // The first and last bytes reject most other names without a call to
    // `memcmp` (numbered names such as `svc12` and `svc45` share the first).
    let (a, b) = (k.as_bytes(), name.as_bytes());
    a.len() == b.len() && (a.as_ptr() == b.as_ptr() || (a.first() == b.first() && a.last() == b.last() && a == b))
}

/// A linear merge of two sorted entry sequences, the right one winning.
fn merge<'a>(
    mut a: impl Iterator<Item = (&'a NixString, &'a Thunk)>,
    mut b: impl Iterator<Item = (&'a NixString, &'a Thunk)>,
    capacity: usize,
) -> Vec<(NixString, Thunk)> {
    let mut out = Vec::with_capacity(capacity);
    let (mut x, mut y) = (a.next(), b.next());
    loop {
        match (x, y) {
            (Some(p), Some(q)) => match p.0.cmp(q.0) {
                std::cmp::Ordering::Less => {
                    out.push((p.0.clone(), p.1.clone()));
                    x = a.next();
                }
                std::cmp::Ordering::Greater => {
                    out.push((q.0.clone(), q.1.clone()));
                    y = b.next();
                }
                std::cmp::Ordering::Equal => {
                    out.push((q.0.clone(), q.1.clone()));
                    x = a.next();
                    y = b.next();
                }
            },
            (Some(p), None) => {
                out.push((p.0.clone(), p.1.clone()));
                out.extend(a.map(|(k, v)| (k.clone(), v.clone())));
                break;
            }
            (None, Some(q)) => {
                out.push((q.0.clone(), q.1.clone()));
                out.extend(b.map(|(k, v)| (k.clone(), v.clone())));
                break;
            }
            (None, None) => break,
        }
    }
    out
}

/// The entries of a set in name order: its base and overlay merged, the
/// overlay hiding equal names.
pub struct Iter<'a> {
    base: &'a [(NixString, Thunk)],
    overlay: &'a [(NixString, Thunk)],
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a NixString, &'a Thunk);

    fn next(&mut self) -> Option<Self::Item> {
        let item = match (self.base.first(), self.overlay.first()) {
            (Some(p), Some(q)) => match p.0.cmp(&q.0) {
                std::cmp::Ordering::Less => {
                    self.base = &self.base[1..];
                    p
                }
                std::cmp::Ordering::Greater => {
                    self.overlay = &self.overlay[1..];
                    q
                }
                std::cmp::Ordering::Equal => {
                    self.base = &self.base[1..];
                    self.overlay = &self.overlay[1..];
                    q
                }
            },
            (Some(p), None) => {
                self.base = &self.base[1..];
                p
            }
            (None, Some(q)) => {
                self.overlay = &self.overlay[1..];
                q
            }
            (None, None) => return None,
        };
        self.remaining -= 1;
        Some((&item.0, &item.1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn int(t: &Thunk) -> i64 {
        match t.peek() {
            Some(Value::Int(i)) => i,
            _ => panic!("not an int"),
        }
    }

    fn set(pairs: &[(String, i64)]) -> Attrs {
        Attrs::from_unsorted(pairs.iter().map(|(k, v)| (k.as_str().into(), Thunk::value(Value::Int(*v)))).collect())
    }

    /// Two words (strings and lists behind thin pointers), and the tag
    /// must not cost a word of its own in thunks and results.
    #[test]
    fn values_stay_two_words() {
        use std::mem::size_of;
        assert_eq!(size_of::<Value>(), 16);
        assert_eq!(size_of::<Thunk>(), 16);
        assert_eq!(size_of::<crate::error::EvalResult<Value>>(), 16);
    }

    /// Repeated small updates of a large set (overlays, then flattening)
    /// agree with a plain map, in contents, order, length and lookups.
    #[test]
    fn overlay_updates_match_a_map() {
        let mut reference: BTreeMap<String, i64> = (0..200).map(|i| (format!("a{i}"), i)).collect();
        let pairs: Vec<_> = reference.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let mut acc = Rc::new(set(&pairs));
        for step in 0..300i64 {
            let small: Vec<_> =
                (0..3).map(|j| (format!("{}{}", ["a", "b", "z"][j], (step * 7 + j as i64) % 250), -step)).collect();
            for (k, v) in &small {
                reference.insert(k.clone(), *v);
            }
            acc = Rc::new(acc.update(&set(&small)));
            assert_eq!(acc.len(), reference.len());
            let got: Vec<_> = acc.iter().map(|(k, v)| (k.to_string(), int(v))).collect();
            let want: Vec<_> = reference.iter().map(|(k, v)| (k.clone(), *v)).collect();
            assert_eq!(got, want, "after step {step}");
            for (k, v) in &reference {
                assert_eq!(acc.get(k).map(int), Some(*v));
            }
            assert!(acc.get("a-missing").is_none());
        }
        let flat = Attrs::from_sorted(Rc::try_unwrap(acc).ok().expect("unique").into_entries());
        assert_eq!(flat.len(), reference.len());
    }

    /// A large set answers from its hash index, and an in-place update
    /// (after the index was built) is seen by later lookups.
    #[test]
    fn indexed_lookups_follow_in_place_updates() {
        let pairs: Vec<_> = (0..(INDEX_MIN as i64 * 3)).map(|i| (format!("n{i}"), i)).collect();
        let mut big = set(&pairs);
        for (k, v) in &pairs {
            assert_eq!(big.get(k).map(int), Some(*v));
        }
        assert!(big.get("n-1").is_none() && big.get("").is_none());
        big.update_in_place(&set(&[("n5".into(), -5), ("new".into(), 1)]));
        assert_eq!(big.get("n5").map(int), Some(-5));
        assert_eq!(big.get("new").map(int), Some(1));
        assert_eq!(big.get("n6").map(int), Some(6));
        assert_eq!(big.len(), pairs.len() + 1);
    }
}

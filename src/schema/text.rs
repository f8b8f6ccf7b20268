//! Inline file content as the closures hold it: one shared allocation per
//! distinct text. A thousand nodes get the same `/etc/hosts` or load
//! balancer config from the evaluator, which shares it; while an
//! [`Interning`] scope is open, decoding keeps that sharing (equal texts
//! decoded in the scope become one `Arc<str>`), so the closures cost memory
//! per distinct text, not per node.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Texts shorter than this are not worth a lookup.
const INTERN_FROM: usize = 256;

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Where the text lives: equal for texts shared through interning, so
    /// work on a text (hashing it) can be done once per allocation.
    pub fn addr(&self) -> usize {
        self.0.as_ptr() as usize
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(s.into())
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(s.into())
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, s: &str) -> Result<Text, E> {
                Ok(intern(s))
            }
        }
        d.deserialize_str(V)
    }
}

thread_local! {
    static TABLE: RefCell<Option<HashMap<u64, Vec<Arc<str>>>>> = const { RefCell::new(None) };
}

/// While alive, equal texts decoded on this thread share one allocation,
/// and so do phases decoded from one value (`shared.rs`). The tables go
/// with the scope (the texts and phases stay, held by what was decoded).
pub struct Interning(());

impl Interning {
    pub fn begin() -> Interning {
        TABLE.with(|t| *t.borrow_mut() = Some(HashMap::new()));
        super::shared::begin();
        Interning(())
    }
}

impl Drop for Interning {
    fn drop(&mut self) {
        TABLE.with(|t| *t.borrow_mut() = None);
        super::shared::end();
    }
}

/// A cheap fingerprint (length, head and tail); equal ones are compared whole.
fn fingerprint(s: &str) -> u64 {
    let b = s.as_bytes();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.len().hash(&mut h);
    b[..b.len().min(128)].hash(&mut h);
    b[b.len().saturating_sub(128)..].hash(&mut h);
    h.finish()
}

fn intern(s: &str) -> Text {
    if s.len() < INTERN_FROM {
        return Text(s.into());
    }
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let Some(table) = t.as_mut() else { return Text(s.into()) };
        let bucket = table.entry(fingerprint(s)).or_default();
        if let Some(found) = bucket.iter().find(|x| ***x == *s) {
            return Text(found.clone());
        }
        let new: Arc<str> = s.into();
        bucket.push(new.clone());
        Text(new)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(json: &str) -> Vec<Text> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn equal_long_texts_share_one_allocation_in_a_scope() {
        let long = "x".repeat(INTERN_FROM);
        let json = format!("[\"{long}\", \"{long}\", \"{long}y\"]");
        let scope = Interning::begin();
        let texts = decode(&json);
        drop(scope);
        assert!(Arc::ptr_eq(&texts[0].0, &texts[1].0));
        assert!(!Arc::ptr_eq(&texts[0].0, &texts[2].0));
        assert_eq!(&*texts[2], format!("{long}y"));
    }

    #[test]
    fn without_a_scope_texts_are_not_shared() {
        let long = "x".repeat(INTERN_FROM);
        let texts = decode(&format!("[\"{long}\", \"{long}\"]"));
        assert!(!Arc::ptr_eq(&texts[0].0, &texts[1].0));
        assert_eq!(texts[0], texts[1]);
    }
}

//! Phases as the closures hold them: one allocation per phase value the
//! evaluator shares. A phase that depends only on a node's group (roles
//! and settings) is one value in the evaluator for every node of the group
//! (see ARCHITECTURE, "What grows with the node count"); while an
//! [`Interning`](super::Interning) scope is open, decoding it again for the
//! next node hands out the phase already decoded (the evaluator tells a
//! value by its identity, `kdeploy_lang::decode::SHARED`). So a thousand
//! workers hold a handful of phases, and what the engine computes from a
//! phase alone — its checks, its hash, its listing — can be computed once
//! per allocation ([`Phase::addr`]).
//!
//! A phase changed in place (`DerefMut`) is copied first, so sharing is
//! never visible.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::{Serialize, Serializer};

use super::PhaseContent;

#[derive(Clone)]
pub struct Phase(Arc<PhaseContent>);

impl Phase {
    /// Where the phase lives: equal for phases decoded from one value, so
    /// work on a phase alone can be done once per allocation.
    pub fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
}

impl From<PhaseContent> for Phase {
    fn from(c: PhaseContent) -> Phase {
        Phase(Arc::new(c))
    }
}

impl Deref for Phase {
    type Target = PhaseContent;
    fn deref(&self) -> &PhaseContent {
        &self.0
    }
}

impl DerefMut for Phase {
    fn deref_mut(&mut self) -> &mut PhaseContent {
        Arc::make_mut(&mut self.0)
    }
}

impl fmt::Debug for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for Phase {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

thread_local! {
    /// Phases decoded in the open scope, by the evaluator's identity of their value.
    static DECODED: RefCell<Option<HashMap<usize, Arc<PhaseContent>>>> = const { RefCell::new(None) };
}

/// Opens the scope (called with [`Interning::begin`](super::Interning::begin)).
pub(super) fn begin() {
    DECODED.with(|d| *d.borrow_mut() = Some(HashMap::new()));
}

/// Closes it; the phases stay, held by what was decoded.
pub(super) fn end() {
    DECODED.with(|d| *d.borrow_mut() = None);
}

impl<'de> Deserialize<'de> for Phase {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Phase, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Phase;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a phase")
            }
            /// From the evaluator: the value's identity, then the value.
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Phase, A::Error> {
                let id: usize = seq.next_element()?.ok_or_else(|| de::Error::custom("a phase without a value"))?;
                let known = (id != 0).then(|| DECODED.with(|d| d.borrow().as_ref()?.get(&id).cloned())).flatten();
                if let Some(p) = known {
                    return Ok(Phase(p));
                }
                let content: PhaseContent =
                    seq.next_element()?.ok_or_else(|| de::Error::custom("a phase without a value"))?;
                let p = Arc::new(content);
                if id != 0 {
                    DECODED.with(|d| d.borrow_mut().as_mut().map(|m| m.insert(id, p.clone())));
                }
                Ok(Phase(p))
            }
            /// From any other deserialiser (JSON): no identity.
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Phase, D::Error> {
                PhaseContent::deserialize(d).map(Phase::from)
            }
        }
        d.deserialize_newtype_struct(kdeploy_lang::decode::SHARED, V)
    }
}

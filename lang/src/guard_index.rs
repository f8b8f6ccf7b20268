//! The names of a list's definitions, indexed once for a loop run over
//! that list many times: the module system asks `concatMap (d: if hasAttr
//! name d.value then [ … ] else [ ]) defs` for every option `name` over
//! the same `defs` (200 names × 800 definitions in
//! `bench/lang/modules_config.nix`), where each element's answer is known
//! in place ([`crate::guard::HasAttrGuard`]) and almost always `[ ]`.
//! The second such loop over a list builds, from the elements already
//! evaluated, which of them have each name under the attribute looked
//! in (`value`); that and any later loop visit only the elements with the
//! name and those not known yet, in list order, and skip the others, whose
//! answer is `[ ]` without looking. A known value never changes, so the
//! index stays true for as long as the list lives (the cache holds it).

use std::rc::Rc;

use hashbrown::HashMap;

use crate::error::EvalResult;
use crate::thunk::Thunk;
use crate::value::{List, NixString, Value};

/// Lists kept at once: a module system scans one list per level at a time.
const KEPT: usize = 4;

/// Shorter lists are scanned element by element: an index would not pay.
pub(crate) const MIN_LEN: usize = 32;

#[derive(Default)]
pub(crate) struct Indexes {
    entries: Vec<Entry>,
}

struct Entry {
    list: List,
    attr: NixString,
    /// `None` after the first loop over the list: built on the second.
    index: Option<Rc<Index>>,
}

pub(crate) struct Index {
    /// For each name, the positions (ascending) of the elements whose
    /// `attr` is a set with that name.
    by_name: HashMap<NixString, Vec<u32>>,
    /// Positions (ascending) of the elements not known when the index was
    /// built (or whose `attr` is not a known set): looked at every time.
    unknown: Vec<u32>,
}

impl Indexes {
    /// The index of `list` by the names of each element's `attr`, when
    /// this is at least the second loop over it.
    pub(crate) fn get(&mut self, list: &List, attr: &NixString) -> Option<Rc<Index>> {
        let same = |e: &Entry| List::ptr_eq(&e.list, list) && NixString::ptr_eq(&e.attr, attr);
        match self.entries.iter_mut().find(|e| same(e)) {
            Some(e) => Some(e.index.get_or_insert_with(|| Rc::new(Index::of(list, attr))).clone()),
            None => {
                if self.entries.len() == KEPT {
                    self.entries.remove(0);
                }
                self.entries.push(Entry { list: list.clone(), attr: attr.clone(), index: None });
                None
            }
        }
    }
}

impl Index {
    fn of(list: &[Thunk], attr: &str) -> Index {
        let mut by_name: HashMap<NixString, Vec<u32>> = HashMap::new();
        let mut unknown = Vec::new();
        for (i, x) in list.iter().enumerate() {
            let i = i as u32;
            // The names of the element's `attr` if both are known sets,
            // copied out before the borrows end.
            let names = x.known().and_then(|outer| match outer {
                Value::Attrs(o) => o.get(attr)?.known().and_then(|inner| match inner {
                    Value::Attrs(a) => Some(a.keys().cloned().collect::<Vec<_>>()),
                    _ => None,
                }),
                _ => None,
            });
            match names {
                Some(names) => {
                    for n in names {
                        by_name.entry(n).or_default().push(i);
                    }
                }
                None => unknown.push(i),
            }
        }
        Index { by_name, unknown }
    }

    /// The positions to visit for `name`, ascending: the elements with the
    /// name and the ones not known.
    pub(crate) fn visit(&self, name: &str, mut f: impl FnMut(usize) -> EvalResult<()>) -> EvalResult<()> {
        let hits: &[u32] = self.by_name.get(name).map_or(&[], |v| v);
        let (mut a, mut b) = (hits.iter().peekable(), self.unknown.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) if x < y => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => return Ok(()),
            };
            if let Some(&i) = next {
                f(i as usize)?;
            }
        }
    }
}

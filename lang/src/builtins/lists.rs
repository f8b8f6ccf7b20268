//! List builtins: map, filter, foldl', genList, elem, elemAt, head, tail,
//! length, all, any, concatLists, concatMap, partition, genericClosure.

use super::{arg_context, Args, BuiltinDef};
use crate::error::{err, ErrorKind, EvalError, EvalResult};
use crate::eval::Evaluator;
use crate::guard_index;
use crate::limits::check_list_len;
use crate::repeat::Repeat;
use crate::thunk::Thunk;
use crate::value::{Attrs, List, Value};

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "map", arity: 2, func: map },
    BuiltinDef { name: "filter", arity: 2, func: filter },
    BuiltinDef { name: "foldl'", arity: 3, func: foldl },
    BuiltinDef { name: "genList", arity: 2, func: gen_list },
    BuiltinDef { name: "elem", arity: 2, func: elem },
    BuiltinDef { name: "elemAt", arity: 2, func: elem_at },
    BuiltinDef { name: "head", arity: 1, func: head },
    BuiltinDef { name: "tail", arity: 1, func: tail },
    BuiltinDef { name: "length", arity: 1, func: length },
    BuiltinDef { name: "all", arity: 2, func: |ev, a| quantify(ev, a, "all", true) },
    BuiltinDef { name: "any", arity: 2, func: |ev, a| quantify(ev, a, "any", false) },
    BuiltinDef { name: "concatLists", arity: 1, func: concat_lists },
    BuiltinDef { name: "concatMap", arity: 2, func: concat_map },
    BuiltinDef { name: "partition", arity: 2, func: partition },
    BuiltinDef { name: "genericClosure", arity: 1, func: generic_closure },
];

fn map(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let f = ev.force(&args[0])?;
    let list = ev.list(&args[1], "the second argument of map")?;
    ev.reserve_list(list.len())?;
    Ok(Value::List(list.iter().map(|x| lazy_apply(ev, &f, x.clone())).collect()))
}

fn predicate(ev: &mut Evaluator, f: &mut Repeat, x: &Thunk, name: &str) -> EvalResult<bool> {
    match f.call1(ev, x.clone())? {
        Value::Bool(b) => Ok(b),
        v => Err(super::expected(&format!("the result of the function passed to builtins.{name}"), "a Boolean", &v)),
    }
}

fn filter(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let mut f = Repeat::new(ev.func(&args[0], "the first argument of builtins.filter")?);
    let list = ev.list(&args[1], "the second argument of builtins.filter")?;
    // Elements are copied only from the first one dropped on: a filter
    // that keeps everything (`filter (d: d.priority == best) defs` of one
    // definition) returns its list itself, without a new one.
    let mut out: Option<Vec<Thunk>> = None;
    for (i, x) in list.iter().enumerate() {
        let keep = predicate(ev, &mut f, x, "filter")?;
        match &mut out {
            Some(out) if keep => out.push(x.clone()),
            Some(_) => {}
            None if keep => {}
            None => out = Some(list[..i].to_vec()),
        }
    }
    Ok(match out {
        None => Value::List(list),
        Some(out) => Value::list(out),
    })
}

fn foldl(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let mut f = Repeat::new(ev.func(&args[0], "the first argument of builtins.foldl'")?);
    let list = ev.list(&args[2], "the third argument of builtins.foldl'")?;
    // As in Nix, the initial accumulator is passed on unforced: only an
    // empty list returns (and so forces) it.
    let Some((first, rest)) = list.split_first() else { return ev.force(&args[1]) };
    let mut acc = f.call2(ev, args[1].clone(), first.clone())?;
    for x in rest {
        acc = f.call2(ev, Thunk::value(acc), x.clone())?;
    }
    Ok(acc)
}

fn gen_list(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let f = ev.force(&args[0])?;
    let n = ev.int(&args[1], "the second argument of builtins.genList")?;
    if n < 0 {
        return err(ErrorKind::InvalidValue, format!("cannot create a list of size {n}"));
    }
    ev.reserve_list(usize::try_from(n).unwrap_or(usize::MAX))?;
    Ok(Value::List((0..n).map(|i| lazy_apply(ev, &f, Thunk::value(Value::Int(i)))).collect()))
}

/// Room for `more` elements in a list being built: within the list limit,
/// and the memory budget is asked each time the vector doubles.
fn grow(ev: &Evaluator, out: &mut Vec<Thunk>, more: usize) -> EvalResult<()> {
    let len = out.len().saturating_add(more);
    check_list_len(len)?;
    if len > out.capacity() {
        let cap = len.max(2 * out.capacity());
        ev.reserve(cap.saturating_mul(std::mem::size_of::<Thunk>()))?;
        out.reserve_exact(cap - out.len());
    }
    Ok(())
}

/// `f x` as a list element: its value when that is cheap to know now, else
/// a thunk.
fn lazy_apply(ev: &Evaluator, f: &Value, x: Thunk) -> Thunk {
    match ev.cheap_apply(f, &x) {
        Some(v) => Thunk::value(v),
        None => Thunk::apply1(f.clone(), x),
    }
}

fn elem(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let x = ev.force(&args[0])?;
    let list = ev.list(&args[1], "the second argument of builtins.elem")?;
    for y in list.iter() {
        let y = ev.force(y)?;
        if ev.equal(&x, &y)? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn elem_at(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let list = ev.list(&args[0], "the first argument of builtins.elemAt")?;
    let i = ev.int(&args[1], "the second argument of builtins.elemAt")?;
    match usize::try_from(i).ok().and_then(|i| list.get(i)) {
        Some(t) => ev.force(&t.clone()),
        None => err(
            ErrorKind::OutOfBounds,
            format!("list index {i} is out of bounds (the list has {} elements)", list.len()),
        ),
    }
}

fn head(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let list = ev.list(&args[0], "the argument of builtins.head")?;
    match list.first() {
        Some(t) => ev.force(&t.clone()),
        None => err(ErrorKind::OutOfBounds, "builtins.head called on an empty list"),
    }
}

fn tail(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let list = ev.list(&args[0], "the argument of builtins.tail")?;
    if list.is_empty() {
        return err(ErrorKind::OutOfBounds, "builtins.tail called on an empty list");
    }
    Ok(Value::List(crate::value::List::from(&list[1..])))
}

fn length(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    Ok(Value::Int(ev.list(&args[0], "the argument of builtins.length")?.len() as i64))
}

fn quantify(ev: &mut Evaluator, args: &[Thunk], name: &str, all: bool) -> EvalResult<Value> {
    // Constant descriptions: formatting them on every call (`all isOption
    // vs` for every declaration) cost ~640 instructions a call, for text
    // only an error shows.
    let (first, second) = if all {
        ("the first argument of builtins.all", "the second argument of builtins.all")
    } else {
        ("the first argument of builtins.any", "the second argument of builtins.any")
    };
    let mut f = Repeat::new(ev.func(&args[0], first)?);
    let list = ev.list(&args[1], second)?;
    for x in list.iter() {
        if predicate(ev, &mut f, x, name)? != all {
            return Ok(Value::Bool(!all));
        }
    }
    Ok(Value::Bool(all))
}

fn concat_lists(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let lists = ev.list(&args[0], "the argument of builtins.concatLists")?;
    let mut out = Vec::new();
    for l in lists.iter() {
        let l = ev.list(l, "an element of the list passed to builtins.concatLists")?;
        grow(ev, &mut out, l.len())?;
        out.extend_from_slice(&l);
    }
    Ok(Value::list(out))
}

fn concat_map(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let mut f = Repeat::new(ev.func(&args[0], "the first argument of builtins.concatMap")?);
    let list = ev.list(&args[1], "the second argument of builtins.concatMap")?;
    // The first non-empty result is kept as it is, and returned itself if
    // no other follows (`concatMap (d: if hasAttr name d.value then [ … ]
    // else [ ]) defs` for a name one definition has): elements are copied
    // into `out` only once a second one comes.
    let mut first: Option<List> = None;
    let mut out = Vec::new();
    // The module system's `concatMap (d: if hasAttr name d.value then
    // [ … ] else [ ]) defs`, asked again for the same `defs`: only the
    // elements with the name, and those not known, are visited.
    let indexed = match f.guard().and_then(|g| g.indexable()) {
        Some((key, attr)) if list.len() >= guard_index::MIN_LEN => {
            let key = key.clone();
            ev.guard_indexes.get(&list, attr).map(|index| (key, index))
        }
        _ => None,
    };
    let mut each = |ev: &mut Evaluator, x: &Thunk| -> EvalResult<()> {
        // Most elements of such a loop add nothing, known in place.
        if f.empty(x) {
            return Ok(());
        }
        match f.call1(ev, x.clone())? {
            Value::List(l) if l.is_empty() => Ok(()),
            Value::List(l) if first.is_none() && out.is_empty() => {
                first = Some(l);
                Ok(())
            }
            Value::List(l) => {
                if let Some(kept) = first.take() {
                    grow(ev, &mut out, kept.len())?;
                    out.extend_from_slice(&kept);
                }
                grow(ev, &mut out, l.len())?;
                out.extend_from_slice(&l);
                Ok(())
            }
            v => Err(super::expected("the result of the function passed to builtins.concatMap", "a list", &v)),
        }
    };
    match indexed {
        Some((key, index)) => index.visit(&key, |i| each(ev, &list[i]))?,
        None => {
            for x in list.iter() {
                each(ev, x)?;
            }
        }
    }
    Ok(match first {
        Some(only) => Value::List(only),
        None => Value::list(out),
    })
}

fn partition(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let mut f = Repeat::new(ev.func(&args[0], "the first argument of builtins.partition")?);
    let list = ev.list(&args[1], "the second argument of builtins.partition")?;
    let (mut right, mut wrong) = (Vec::new(), Vec::new());
    for x in list.iter() {
        if predicate(ev, &mut f, x, "partition")? {
            right.push(x.clone());
        } else {
            wrong.push(x.clone());
        }
    }
    Ok(Value::attrs(Attrs::from_sorted(vec![
        ("right".into(), Thunk::value(Value::list(right))),
        ("wrong".into(), Thunk::value(Value::list(wrong))),
    ])))
}

/// Breadth-first closure over `operator`, deduplicating on `key` with Nix's
/// ordering: integer and string keys (the usual ones) in a hash set, other
/// keys in a sorted vector for logarithmic membership tests. The closure is
/// a list, so it is bounded by [`crate::limits::MAX_LIST`].
fn generic_closure(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let params = ev.attrs(&args[0], "the argument of builtins.genericClosure")?;
    let start = params.get("startSet").cloned().ok_or_else(|| {
        EvalError::new(ErrorKind::MissingAttribute, "attribute 'startSet' required by builtins.genericClosure")
    })?;
    let op = params.get("operator").cloned().ok_or_else(|| {
        EvalError::new(ErrorKind::MissingAttribute, "attribute 'operator' required by builtins.genericClosure")
    })?;
    let op = ev.func(&op, "the operator of builtins.genericClosure")?;
    let mut queue: std::collections::VecDeque<Thunk> = ev.list(&start, "startSet")?.iter().cloned().collect();
    let mut seen = Keys::default();
    let mut out = Vec::new();
    while let Some(t) = queue.pop_front() {
        let item = arg_context(ev.attrs(&t, "an element of the closure"), "first", "genericClosure")?;
        let key = item.get("key").cloned().ok_or_else(|| {
            EvalError::new(ErrorKind::MissingAttribute, "attribute 'key' required by builtins.genericClosure")
        })?;
        let key = ev.force(&key)?;
        if !seen.insert(ev, key)? {
            continue;
        }
        grow(ev, &mut out, 1)?;
        out.push(t.clone());
        let next = ev.call1(&op, t)?;
        match next {
            Value::List(l) => queue.extend(l.iter().cloned()),
            v => return Err(super::expected("the result of the genericClosure operator", "a list", &v)),
        }
    }
    Ok(Value::list(out))
}

/// The keys `genericClosure` has seen. Under Nix's ordering an integer
/// equals only an equal integer (or float) and a string only an equal
/// string, so while every key is an integer, or every key a string, a hash
/// set answers; the first other key (a float, a list, or a string among
/// integers, which Nix refuses to compare) moves all to a sorted vector.
#[derive(Default)]
struct Keys {
    ints: std::collections::HashSet<i64>,
    strings: std::collections::HashSet<crate::value::NixString>,
    others: Option<Vec<Value>>,
}

impl Keys {
    /// Adds `key`; false if an equal key was there.
    fn insert(&mut self, ev: &mut Evaluator, key: Value) -> EvalResult<bool> {
        if self.others.is_none() {
            match &key {
                Value::Int(i) if self.strings.is_empty() => return Ok(self.ints.insert(*i)),
                Value::String(s) if self.ints.is_empty() => return Ok(self.strings.insert(s.clone())),
                _ => {
                    let mut ints: Vec<i64> = self.ints.drain().collect();
                    ints.sort_unstable();
                    let mut strings: Vec<_> = self.strings.drain().collect();
                    strings.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
                    let all = ints.into_iter().map(Value::Int).chain(strings.into_iter().map(Value::String));
                    self.others = Some(all.collect());
                }
            }
        }
        let seen = self.others.as_mut().expect("set above");
        let mut lo = 0;
        let mut hi = seen.len();
        while lo < hi {
            let mid = (lo + hi) / 2;
            match crate::arith::compare(ev, &seen[mid], &key)? {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(false),
            }
        }
        seen.insert(lo, key);
        Ok(true)
    }
}

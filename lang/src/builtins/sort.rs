//! `builtins.sort`: a stable merge sort driven by a user comparator. It is
//! written here rather than using `slice::sort_by` because a comparator that
//! is not a total order must give some order, never a panic.

use super::{Args, BuiltinDef};
use crate::error::EvalResult;
use crate::eval::Evaluator;
use crate::repeat::Repeat;
use crate::thunk::Thunk;
use crate::value::Value;

pub const DEFS: &[BuiltinDef] = &[BuiltinDef { name: "sort", arity: 2, func: sort }];

fn sort(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let mut f = Repeat::new(ev.func(&args[0], "the first argument of builtins.sort")?);
    let list = ev.list(&args[1], "the second argument of builtins.sort")?;
    let mut items: Vec<Thunk> = list.to_vec();
    let mut less = |a: &Thunk, b: &Thunk| -> EvalResult<bool> {
        match f.call2(ev, a.clone(), b.clone())? {
            Value::Bool(x) => Ok(x),
            v => Err(super::expected("the result of the comparator passed to builtins.sort", "a Boolean", &v)),
        }
    };
    merge_sort(&mut items, &mut less)?;
    Ok(Value::list(items))
}

pub fn merge_sort<T: Clone, E>(items: &mut Vec<T>, less: &mut impl FnMut(&T, &T) -> Result<bool, E>) -> Result<(), E> {
    let n = items.len();
    let mut width = 1;
    let mut buf: Vec<T> = Vec::with_capacity(n);
    while width < n {
        buf.clear();
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j) = (start, mid);
            while i < mid && j < end {
                // Take from the right only when strictly less: keeps it stable.
                if less(&items[j], &items[i])? {
                    buf.push(items[j].clone());
                    j += 1;
                } else {
                    buf.push(items[i].clone());
                    i += 1;
                }
            }
            buf.extend_from_slice(&items[i..mid]);
            buf.extend_from_slice(&items[j..end]);
            start = end;
        }
        std::mem::swap(items, &mut buf);
        width *= 2;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::merge_sort;

    #[test]
    fn sorts_stably_and_survives_inconsistent_comparators() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (1, 'e')];
        merge_sort(&mut v, &mut |a, b| Ok::<_, ()>(a.0 < b.0)).unwrap();
        assert_eq!(v, vec![(1, 'b'), (1, 'e'), (2, 'd'), (3, 'a'), (3, 'c')]);
        let mut w: Vec<i32> = (0..100).rev().collect();
        merge_sort(&mut w, &mut |_, _| Ok::<_, ()>(true)).unwrap();
        assert_eq!(w.len(), 100);
    }
}

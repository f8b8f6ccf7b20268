//! A function a builtin calls once per element whose body is `if hasAttr
//! K S then T else E` (the module system's `concatMap (d: if hasAttr name
//! d.value then [ … ] else [ ]) defs`): what does not depend on the element
//! (the name, or the set) is read once, when the loop starts, and each
//! element then costs a lookup or two in place. The branch taken, when it
//! is a constant, is the call's value, without a frame or a step of the
//! evaluator; anything else (an element not evaluated yet, a branch to
//! compute, a value of another type) is left to the call proper, so
//! nothing is forced here and no error is raised in another place or
//! order than the call would.

use std::rc::Rc;

use crate::env::Env;
use crate::ir::{AttrKey, Expr, ExprRef, FastBuiltin, Lambda};
use crate::thunk::Thunk;
use crate::value::{Attrs, NixString, Value};

pub(crate) struct HasAttrGuard {
    key: Key,
    set: Set,
    then: ExprRef,
    else_: ExprRef,
    /// Whether each branch is the constant `[ ]`, known once for the loop.
    then_empty: bool,
    else_empty: bool,
}

/// The name looked up: known when the loop starts, or the element.
enum Key {
    Known(NixString),
    Arg,
}

/// The set looked in: known when the loop starts, the element, or one of
/// its attributes (`d.value`).
enum Set {
    Known(Rc<Attrs>),
    Arg,
    ArgAttr(NixString),
}

impl HasAttrGuard {
    /// The guard of `lambda` (a single-parameter function) closed over
    /// `env`, if its body has that shape and what it reads of its scope is
    /// already known.
    pub(crate) fn of(lambda: &Lambda, env: &Rc<Env>) -> Option<HasAttrGuard> {
        let Expr::If { cond, then, else_, .. } = &*lambda.body else { return None };
        let Expr::CallBuiltin { fast: FastBuiltin::HasAttr, args, .. } = &**cond else { return None };
        let [name, set] = &args[..] else { return None };
        // The body's depth 0 is the parameter; depth d > 0 is d - 1 in `env`.
        let outer = |e: &Expr| -> Option<Value> {
            match e {
                Expr::Const(v) => Some(v.clone()),
                Expr::Local { depth, index, .. } if *depth > 0 => env.thunk_at(depth - 1, *index)?.peek(),
                _ => None,
            }
        };
        let key = match name {
            e if is_param(e) => Key::Arg,
            e => match outer(e)? {
                Value::String(s) => Key::Known(s),
                _ => return None,
            },
        };
        let set = match &**set {
            e if is_param(e) => Set::Arg,
            Expr::Select { expr, path, default: None, .. } if is_param(expr) => match &path[..] {
                [AttrKey::Static(attr)] => Set::ArgAttr(attr.clone()),
                _ => return None,
            },
            e => match outer(e)? {
                Value::Attrs(a) => Set::Known(a),
                _ => return None,
            },
        };
        let empty = |e: &Expr| matches!(e, Expr::Const(Value::List(l)) if l.is_empty());
        Some(HasAttrGuard {
            key,
            set,
            then_empty: empty(then),
            else_empty: empty(else_),
            then: then.clone(),
            else_: else_.clone(),
        })
    }

    /// The value of the call with argument `a` when the condition is known
    /// without forcing anything and the branch it takes is a constant.
    #[inline(always)]
    pub(crate) fn value(&self, a: &Thunk) -> Option<Value> {
        match &**self.branch(a)? {
            Expr::Const(v) => Some(v.clone()),
            _ => None,
        }
    }

    /// True when the call with argument `a` is known to be `[ ]` (the
    /// usual `else` branch), which `concatMap` then skips without a call.
    #[inline(always)]
    pub(crate) fn empty(&self, a: &Thunk) -> bool {
        (self.then_empty || self.else_empty)
            && self.decide(a).is_some_and(|b| if b { self.then_empty } else { self.else_empty })
    }

    /// The name and the attribute of `x: if hasAttr name x.attr then T
    /// else [ ]` with `name` known for the loop: what
    /// [`crate::guard_index`] indexes a list by.
    pub(crate) fn indexable(&self) -> Option<(&NixString, &NixString)> {
        match (&self.key, &self.set) {
            (Key::Known(key), Set::ArgAttr(attr)) if self.else_empty && !self.then_empty => Some((key, attr)),
            _ => None,
        }
    }

    /// The branch the call with argument `a` takes, if known in place.
    #[inline(always)]
    fn branch(&self, a: &Thunk) -> Option<&ExprRef> {
        Some(if self.decide(a)? { &self.then } else { &self.else_ })
    }

    #[inline(always)]
    fn decide(&self, a: &Thunk) -> Option<bool> {
        let arg;
        let key: &str = match &self.key {
            Key::Known(s) => s,
            Key::Arg => {
                arg = a.known()?;
                match arg {
                    Value::String(s) => s,
                    _ => return None,
                }
            }
        };
        let outer;
        let inner;
        let set: &Attrs = match &self.set {
            Set::Known(s) => s,
            Set::Arg | Set::ArgAttr(_) => {
                outer = a.known()?;
                let Value::Attrs(o) = outer else { return None };
                match &self.set {
                    Set::ArgAttr(attr) => {
                        inner = o.get(attr)?.known()?;
                        match inner {
                            Value::Attrs(i) => i,
                            _ => return None,
                        }
                    }
                    _ => o,
                }
            }
        };
        Some(set.contains(key))
    }
}

/// The parameter of a single-parameter function, read in its body.
fn is_param(e: &Expr) -> bool {
    matches!(e, Expr::Local { depth: 0, .. })
}

//! Lazy values with sharing. A [`Thunk`] is either an already known value
//! (no allocation) or a shared cell that is evaluated at most once; while it
//! is being evaluated it is a black hole that remembers where it was first
//! demanded, so that infinite recursion is reported at that place.

use std::cell::{Ref, RefCell};
use std::rc::Rc;

use crate::env::Env;
use crate::error::EvalResult;
use crate::eval::Evaluator;
use crate::ir::Expr;
use crate::source::Span;
use crate::value::Value;

#[derive(Clone)]
pub struct Thunk(Repr);

#[derive(Clone)]
enum Repr {
    Ready(Value),
    Lazy(Rc<RefCell<State>>),
}

/// A deferred computation produced by a builtin (e.g. one element of `map`).
pub type Native = Box<dyn FnOnce(&mut Evaluator) -> EvalResult<Value>>;

pub enum State {
    Pending(Rc<Expr>, Rc<Env>),
    /// `f x`, the common case of `map` and `genList`, without a vector.
    Apply1(Value, Thunk),
    Apply(Value, Vec<Thunk>),
    Native(Native),
    /// Being evaluated; the span is where evaluation started.
    Blackhole(Option<Span>),
    Done(Value),
}

/// A known value borrowed from a thunk ([`Thunk::known`]).
pub enum Known<'a> {
    Ready(&'a Value),
    Done(Ref<'a, Value>),
}

impl std::ops::Deref for Known<'_> {
    type Target = Value;

    #[inline(always)]
    fn deref(&self) -> &Value {
        match self {
            Known::Ready(v) => v,
            Known::Done(v) => v,
        }
    }
}

impl Thunk {
    #[inline(always)]
    pub fn value(v: Value) -> Thunk {
        Thunk(Repr::Ready(v))
    }

    pub fn pending(expr: Rc<Expr>, env: Rc<Env>) -> Thunk {
        Thunk(Repr::Lazy(Rc::new(RefCell::new(State::Pending(expr, env)))))
    }

    pub fn apply1(f: Value, arg: Thunk) -> Thunk {
        Thunk(Repr::Lazy(Rc::new(RefCell::new(State::Apply1(f, arg)))))
    }

    pub fn apply(f: Value, args: Vec<Thunk>) -> Thunk {
        Thunk(Repr::Lazy(Rc::new(RefCell::new(State::Apply(f, args)))))
    }

    pub fn native(f: impl FnOnce(&mut Evaluator) -> EvalResult<Value> + 'static) -> Thunk {
        Thunk(Repr::Lazy(Rc::new(RefCell::new(State::Native(Box::new(f))))))
    }

    /// The value if it is already known, without evaluating anything.
    #[inline(always)]
    pub fn peek(&self) -> Option<Value> {
        self.inspect(|v| Some(v.clone()))
    }

    /// `f` of the value if it is already known, without cloning the value
    /// (`f` must not force anything).
    #[inline(always)]
    pub fn inspect<R>(&self, f: impl FnOnce(&Value) -> Option<R>) -> Option<R> {
        // One call of `f`, not one per case: one copy of its code where it
        // is inlined.
        let done;
        let v = match &self.0 {
            Repr::Ready(v) => v,
            Repr::Lazy(cell) => {
                done = cell.borrow();
                match &*done {
                    State::Done(v) => v,
                    _ => return None,
                }
            }
        };
        f(v)
    }

    /// The value if it is already known, borrowed in place: what
    /// [`Self::inspect`] gives its closure, for code that looks at several
    /// values at once (the guard must be dropped before anything is
    /// forced).
    #[inline(always)]
    pub fn known(&self) -> Option<Known<'_>> {
        match &self.0 {
            Repr::Ready(v) => Some(Known::Ready(v)),
            Repr::Lazy(cell) => Ref::filter_map(cell.borrow(), |s| match s {
                State::Done(v) => Some(v),
                _ => None,
            })
            .ok()
            .map(Known::Done),
        }
    }

    #[inline(always)]
    pub(crate) fn cell(&self) -> Option<&Rc<RefCell<State>>> {
        match &self.0 {
            Repr::Ready(_) => None,
            Repr::Lazy(cell) => Some(cell),
        }
    }

    /// A thunk that computes the same value in a cell of its own, so that
    /// forcing it does not keep the value in this one (what the value shares
    /// with others through its environment stays shared). `None` when that
    /// cannot be had: a builtin's deferred call runs once, and a cell being
    /// evaluated must be forced to report the recursion.
    pub fn unshared(&self) -> Option<Thunk> {
        let Repr::Lazy(cell) = &self.0 else { return Some(self.clone()) };
        match &*cell.borrow() {
            State::Pending(expr, env) => Some(Thunk::pending(expr.clone(), env.clone())),
            State::Apply1(f, arg) => Some(Thunk::apply1(f.clone(), arg.clone())),
            State::Apply(f, args) => Some(Thunk::apply(f.clone(), args.clone())),
            State::Done(v) => Some(Thunk::value(v.clone())),
            State::Native(_) | State::Blackhole(_) => None,
        }
    }

    /// True when both handles share one cell (used to short-cut equality).
    pub fn ptr_eq(&self, other: &Thunk) -> bool {
        match (&self.0, &other.0) {
            (Repr::Lazy(a), Repr::Lazy(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
}

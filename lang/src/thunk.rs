//! Lazy values with sharing. A [`Thunk`] is either an already known value
//! (no allocation) or a shared cell that is evaluated at most once; while it
//! is being evaluated it is a black hole that remembers where it was first
//! demanded, so that infinite recursion is reported at that place.
//!
//! The cell ([`Lazy`]) has no borrow flag: a value once computed is never
//! written again, so a reference to it stays good while the cell lives,
//! and every other state is only read or replaced inside this module's
//! methods, none of which runs other code while it holds a reference.

use std::cell::UnsafeCell;
use std::rc::Rc;

use crate::env::Env;
use crate::error::EvalResult;
use crate::eval::{expr_span, Evaluator};
use crate::ir::Expr;
use crate::source::Span;
use crate::thin::RcSlice;
use crate::value::Value;

#[derive(Clone)]
pub struct Thunk(Repr);

#[derive(Clone)]
enum Repr {
    Ready(Value),
    Lazy(Rc<Lazy>),
}

/// The shared cell of a thunk not known when made: 32 bytes of state and
/// the `Rc`'s two counts, 48 bytes in all, one of mimalloc's block sizes
/// (a `RefCell`'s flag made it 64, a state of 40 bytes 56).
pub struct Lazy(UnsafeCell<State>);

impl Lazy {
    fn new(state: State) -> Rc<Lazy> {
        Rc::new(Lazy(UnsafeCell::new(state)))
    }

    /// The value, once computed.
    #[inline(always)]
    pub fn done(&self) -> Option<&Value> {
        // SAFETY: a shared reference; the only writes (`replace`, `begin`,
        // `fill_hole`) happen while no reference into the state is alive:
        // the ones this returns are into a `Done` state, which is never
        // written again (`replace` and `begin` refuse it, `fill_hole` takes
        // only a black hole), and the others live only inside this
        // module's methods, which run no other code meanwhile.
        match unsafe { &*self.0.get() } {
            State::Done(v) => Some(v),
            _ => None,
        }
    }

    /// True while the cell is being evaluated.
    #[inline(always)]
    pub fn is_blackhole(&self) -> bool {
        // SAFETY: as in `done`; the reference ends here.
        matches!(unsafe { &*self.0.get() }, State::Blackhole(_))
    }

    /// Puts `next` in the cell and returns what was there, which must not
    /// be a computed value: references to that may be held (see `done`).
    #[inline(always)]
    pub fn replace(&self, next: State) -> State {
        if self.done().is_some() {
            already_done();
        }
        // SAFETY: the state is not `Done`, so no reference handed out by
        // `done` points into it, and no other reference into the cell is
        // alive (see `done`): this is the only one while it lives.
        unsafe { std::mem::replace(&mut *self.0.get(), next) }
    }

    /// Starts evaluating the cell: a pending expression is taken and left
    /// as a black hole that remembers where it starts; a black hole is
    /// left as it is; any other state is taken, leaving a black hole.
    #[inline(always)]
    pub fn begin(&self) -> Begin {
        if self.done().is_some() {
            already_done();
        }
        // SAFETY: as in `replace`; `expr_span` only reads the expression.
        let s = unsafe { &mut *self.0.get() };
        match s {
            State::Pending(expr, _) => {
                let span = expr_span(expr);
                match std::mem::replace(s, State::Blackhole(span)) {
                    State::Pending(expr, env) => Begin::Pending(expr, env),
                    _ => unreachable!("matched above"),
                }
            }
            State::Blackhole(span) => Begin::Blackhole(*span),
            _ => Begin::Other(std::mem::replace(s, State::Blackhole(None))),
        }
    }

    /// Replaces the black hole the cell holds, without a call of the drop
    /// glue (a black hole owns nothing): ~20 instructions a force.
    #[inline(always)]
    pub fn fill_hole(&self, next: State) {
        if !self.is_blackhole() {
            not_a_hole();
        }
        // SAFETY: the cell holds a black hole, not `Done`, so no reference
        // points into it (see `done`); it owns nothing (checked when compiled,
        // below), so overwriting it without dropping it leaks nothing.
        unsafe { self.0.get().write(next) }
    }
}

/// `fill_hole` overwrites a black hole without dropping it: a compile
/// error if what a black hole holds ever gets drop glue.
const _: () = assert!(!std::mem::needs_drop::<Option<Span>>());

/// What [`Lazy::begin`] found.
pub enum Begin {
    Pending(Rc<Expr>, Rc<Env>),
    Blackhole(Option<Span>),
    Other(State),
}

#[cold]
#[inline(never)]
fn not_a_hole() -> ! {
    panic!("a thunk's black hole filled twice")
}

#[cold]
#[inline(never)]
fn already_done() -> ! {
    panic!("a thunk's computed value written again")
}

/// A deferred computation produced by a builtin (e.g. one element of `map`).
pub type Native = Box<dyn FnOnce(&mut Evaluator) -> EvalResult<Value>>;

pub enum State {
    Pending(Rc<Expr>, Rc<Env>),
    /// `f x`, the common case of `map` and `genList`, without a vector.
    Apply1(Value, Thunk),
    /// `f a b` (`mapAttrs`, `zipAttrsWith`): the function, known, first,
    /// then the arguments, behind one pointer. A value and a vector here
    /// made every state 40 bytes; this way the largest is `Apply1`, 32, and
    /// the tag lives in a spare value of its `Value`'s tag.
    Apply(RcSlice<Thunk>),
    Native(Native),
    /// Being evaluated; the span is where evaluation started.
    Blackhole(Option<Span>),
    Done(Value),
}

impl Thunk {
    #[inline(always)]
    pub fn value(v: Value) -> Thunk {
        Thunk(Repr::Ready(v))
    }

    pub fn pending(expr: Rc<Expr>, env: Rc<Env>) -> Thunk {
        Thunk(Repr::Lazy(Lazy::new(State::Pending(expr, env))))
    }

    pub fn apply1(f: Value, arg: Thunk) -> Thunk {
        Thunk(Repr::Lazy(Lazy::new(State::Apply1(f, arg))))
    }

    /// `f a b`, computed when forced.
    pub fn apply2(f: Value, a: Thunk, b: Thunk) -> Thunk {
        Thunk(Repr::Lazy(Lazy::new(State::Apply([Thunk::value(f), a, b].into_iter().collect()))))
    }

    pub fn native(f: impl FnOnce(&mut Evaluator) -> EvalResult<Value> + 'static) -> Thunk {
        Thunk(Repr::Lazy(Lazy::new(State::Native(Box::new(f)))))
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
        f(self.known()?)
    }

    /// The value if it is already known, borrowed in place: what
    /// [`Self::inspect`] gives its closure, for code that looks at several
    /// values at once.
    #[inline(always)]
    pub fn known(&self) -> Option<&Value> {
        match &self.0 {
            Repr::Ready(v) => Some(v),
            Repr::Lazy(cell) => cell.done(),
        }
    }

    #[inline(always)]
    pub(crate) fn cell(&self) -> Option<&Rc<Lazy>> {
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
        // SAFETY: as in `Lazy::done`: only clones are made while the
        // reference lives, which run nothing of the evaluator.
        match unsafe { &*cell.0.get() } {
            State::Pending(expr, env) => Some(Thunk::pending(expr.clone(), env.clone())),
            State::Apply1(f, arg) => Some(Thunk::apply1(f.clone(), arg.clone())),
            State::Apply(parts) => Some(Thunk(Repr::Lazy(Lazy::new(State::Apply(parts.clone()))))),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What the evaluator's memory is made of: a value and a thunk are two
    /// words (a list or string behind a thin pointer), and a thunk's cell
    /// with its `Rc` counts is 48 bytes, which mimalloc does not round up.
    #[test]
    fn sizes() {
        use std::mem::size_of;
        assert_eq!(size_of::<Value>(), 16);
        assert_eq!(size_of::<Thunk>(), 16);
        assert_eq!(size_of::<State>(), 32);
        assert_eq!(size_of::<Lazy>(), 32);
    }

    /// A computed value stays where it is: a reference to it outlives
    /// later forces of the same thunk, and a cell once done refuses to be
    /// written again.
    #[test]
    fn done_is_never_written_again() {
        let t = Thunk(Repr::Lazy(Lazy::new(State::Done(Value::string("kept")))));
        let cell = t.cell().expect("a cell");
        let v = t.known().expect("known");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cell.replace(State::Blackhole(None))));
        assert!(r.is_err());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cell.fill_hole(State::Blackhole(None))));
        assert!(r.is_err());
        assert!(matches!(v, Value::String(s) if &**s == "kept"));
    }
}

//! Calling one function many times, as `foldl'`, `filter`, `concatMap`,
//! `all`/`any`, `partition` and `sort` do: the call frame of the previous
//! call is reused when that call left no reference to it (no closure or
//! thunk of its body escaped), so a loop over a list allocates no frame per
//! element. Anything else goes through [`Evaluator::apply`].

use std::rc::Rc;

use crate::env::Env;
use crate::error::EvalResult;
use crate::eval::{call_context, Evaluator, CHEAP_BUDGET};
use crate::guard::HasAttrGuard;
use crate::ir::{Expr, Lambda, Param};
use crate::thunk::Thunk;
use crate::value::{Closure, Value};

pub struct Repeat {
    f: Value,
    /// The frame of the last [`Self::call1`].
    frame1: Option<Rc<Env>>,
    /// The inner frame of the last [`Self::call2`] (its parent holds `a`).
    frame2: Option<Rc<Env>>,
    /// `f`'s body as a guard, when it is `if hasAttr K S then T else E`.
    guard: Option<HasAttrGuard>,
}

impl Repeat {
    pub fn new(f: Value) -> Repeat {
        let guard = match &f {
            Value::Lambda(c) if matches!(c.lambda.param, Param::Ident) => HasAttrGuard::of(&c.lambda, &c.env),
            _ => None,
        };
        Repeat { f, frame1: None, frame2: None, guard }
    }

    /// `f a`.
    pub fn call1(&mut self, ev: &mut Evaluator, a: Thunk) -> EvalResult<Value> {
        let Value::Lambda(c) = &self.f else { return ev.apply(self.f.clone(), a, None) };
        if !matches!(c.lambda.param, Param::Ident) {
            return ev.apply(self.f.clone(), a, None);
        }
        if let Some(v) = self.guard.as_ref().and_then(|g| g.value(&a)) {
            return Ok(v);
        }
        // A body known without running anything (`if hasAttr name d.value
        // then … else [ ]` for most `d`, `!(hasAttr n decls)`,
        // `d.priority == best`) needs no frame.
        if let Some(v) = ev.cheap(&c.lambda.body, &c.env, Some(&a), CHEAP_BUDGET) {
            return Ok(v);
        }
        let frame = match self.frame1.take() {
            Some(frame) if Rc::strong_count(&frame) == 1 => {
                frame.set(0, a);
                frame
            }
            _ => Env::with_one(&c.env, a),
        };
        let r = ev.eval_body(&c.lambda.body, &frame).map_err(|e| call_context(e, &c.lambda, None));
        self.frame1 = Some(frame);
        r
    }

    /// True when `f a` is known to be the empty list without calling `f`
    /// (see [`HasAttrGuard::empty`]).
    #[inline(always)]
    pub fn empty(&self, a: &Thunk) -> bool {
        self.guard.as_ref().is_some_and(|g| g.empty(a))
    }

    /// `f`'s body as a guard, if it is one ([`HasAttrGuard`]).
    pub fn guard(&self) -> Option<&HasAttrGuard> {
        self.guard.as_ref()
    }

    /// `f a b`; when `f` is `a: b: body`, without building the closure
    /// `f a` in between.
    pub fn call2(&mut self, ev: &mut Evaluator, a: Thunk, b: Thunk) -> EvalResult<Value> {
        let Some((c, inner)) = curried(&self.f) else { return ev.apply2(&self.f, a, b) };
        let frame = match self.frame2.take() {
            Some(frame) if Rc::strong_count(&frame) == 1 && frame.parent_unshared() => {
                frame.set_in_parent(0, a);
                frame.set(0, b);
                frame
            }
            _ => Env::with_one(&Env::with_one(&c.env, a), b),
        };
        // A body like `acc + x` needs no evaluation machinery at all.
        let r = match ev.cheap(&inner.body, &frame, None, CHEAP_BUDGET) {
            Some(v) => Ok(v),
            None => ev.eval(&inner.body, &frame).map_err(|e| call_context(e, inner, None)),
        };
        self.frame2 = Some(frame);
        r
    }
}

/// `a: b: body`: the closure and its inner lambda.
pub(crate) fn curried(f: &Value) -> Option<(&Rc<Closure>, &Rc<Lambda>)> {
    let Value::Lambda(c) = f else { return None };
    match (&c.lambda.param, &*c.lambda.body) {
        (Param::Ident, Expr::Lambda(inner)) if matches!(inner.param, Param::Ident) => Some((c, inner)),
        _ => None,
    }
}

//! Reading what is already known, in place: a variable's thunk borrowed
//! from its frame (or from the argument of a call whose frame is not made
//! yet), and the builtins [`FastBuiltin`] computes from known values
//! (`hasAttr name d.value`, `isAttrs v`, `length l`). Nothing here forces,
//! fails or clones more than the result: the evaluator's cheap paths
//! ([`crate::eval::Evaluator::cheap`], `builtin_call`) use it to skip a
//! thunk, a frame or a turn of the evaluation step when the answer is had
//! without running anything.

use std::rc::Rc;

use crate::env::Env;
use crate::ir::{AttrKey, Expr, FastBuiltin};
use crate::thunk::Thunk;
use crate::value::Value;

/// The thunk of the variable at (`depth`, `index`). With `arg`, `env` is
/// the scope of a call whose frame holds only `arg`: depth 0 is `arg` and
/// every other depth is one less in `env`. `None` for a slot of a frame
/// still being filled, and for a frame's own function
/// ([`Env::thunk_at`]).
#[inline(always)]
pub(crate) fn slot_ref<'a>(env: &'a Rc<Env>, arg: Option<&'a Thunk>, depth: u32, index: u32) -> Option<&'a Thunk> {
    match arg {
        None => env.thunk_at(depth, index),
        Some(a) if depth == 0 => Some(a),
        Some(_) => env.thunk_at(depth - 1, index),
    }
}

/// `hasAttr name set` when both values are known, looked at in place (a
/// constant or a variable for the name; a variable `s` or `s.attr` for the
/// set), without a closure per level: the hottest call of a module system
/// (`hasAttr name d.value` for every option and definition). `arg` as in
/// [`slot_ref`].
#[inline(always)]
pub(crate) fn known_has_attr(name: &Expr, set: &Expr, env: &Rc<Env>, arg: Option<&Thunk>) -> Option<bool> {
    let name_slot;
    let name_known;
    let key = match name {
        Expr::Const(v) => v,
        Expr::Local { depth, index, .. } => {
            name_slot = slot_ref(env, arg, *depth, *index)?;
            name_known = name_slot.known()?;
            name_known
        }
        _ => return None,
    };
    let Value::String(key) = key else { return None };
    let (var, attr) = match set {
        Expr::Local { depth, index, .. } => ((*depth, *index), None),
        Expr::Select { expr, path, default: None, .. } => match (&**expr, &path[..]) {
            (Expr::Local { depth, index, .. }, [AttrKey::Static(attr)]) => ((*depth, *index), Some(attr)),
            _ => return None,
        },
        _ => return None,
    };
    let slot = slot_ref(env, arg, var.0, var.1)?;
    let outer = slot.known()?;
    let inner;
    let set = match attr {
        None => outer,
        Some(attr) => {
            let Value::Attrs(a) = outer else { return None };
            inner = a.get(attr)?.known()?;
            inner
        }
    };
    match set {
        Value::Attrs(a) => Some(a.contains(key)),
        _ => None,
    }
}

/// A unary [`FastBuiltin`] of `v`; `None` when the builtin itself must
/// run (an argument of another type: its error).
#[inline(always)]
pub(crate) fn fast_unary(fast: FastBuiltin, v: &Value) -> Option<Value> {
    Some(Value::Bool(match fast {
        FastBuiltin::IsAttrs => matches!(v, Value::Attrs(_)),
        FastBuiltin::IsList => matches!(v, Value::List(_)),
        FastBuiltin::IsString => matches!(v, Value::String(_)),
        FastBuiltin::IsInt => matches!(v, Value::Int(_)),
        FastBuiltin::IsBool => matches!(v, Value::Bool(_)),
        FastBuiltin::IsFunction => v.is_function(),
        FastBuiltin::Length => match v {
            Value::List(l) => return Some(Value::Int(l.len() as i64)),
            _ => return None,
        },
        FastBuiltin::None | FastBuiltin::HasAttr | FastBuiltin::Strict => return None,
    }))
}

//! Type predicates and `typeOf`.

use super::BuiltinDef;
use crate::error::EvalResult;
use crate::eval::Evaluator;
use crate::thunk::Thunk;
use crate::value::Value;

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "isAttrs", arity: 1, func: |ev, a| is(ev, a, |v| matches!(v, Value::Attrs(_))) },
    BuiltinDef { name: "isBool", arity: 1, func: |ev, a| is(ev, a, |v| matches!(v, Value::Bool(_))) },
    BuiltinDef { name: "isFloat", arity: 1, func: |ev, a| is(ev, a, |v| matches!(v, Value::Float(_))) },
    BuiltinDef { name: "isFunction", arity: 1, func: |ev, a| is(ev, a, Value::is_function) },
    BuiltinDef { name: "isInt", arity: 1, func: |ev, a| is(ev, a, |v| matches!(v, Value::Int(_))) },
    BuiltinDef { name: "isList", arity: 1, func: |ev, a| is(ev, a, |v| matches!(v, Value::List(_))) },
    BuiltinDef { name: "isNull", arity: 1, func: |ev, a| is(ev, a, |v| matches!(v, Value::Null)) },
    BuiltinDef { name: "isPath", arity: 1, func: |ev, a| is(ev, a, |v| matches!(v, Value::Path(_))) },
    BuiltinDef { name: "isString", arity: 1, func: |ev, a| is(ev, a, |v| matches!(v, Value::String(_))) },
    BuiltinDef { name: "typeOf", arity: 1, func: type_of },
];

fn is(ev: &mut Evaluator, args: &[Thunk], pred: fn(&Value) -> bool) -> EvalResult<Value> {
    Ok(Value::Bool(pred(&ev.force(&args[0])?)))
}

fn type_of(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    Ok(Value::string(ev.force(&args[0])?.type_name()))
}

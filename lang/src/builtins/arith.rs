//! Arithmetic and bit builtins: add, sub, mul, div, bitAnd/Or/Xor,
//! lessThan, ceil, floor.

use super::{Args, BuiltinDef};
use crate::arith::{arith, compare};
use crate::error::{ErrorKind, EvalError, EvalResult};
use crate::eval::Evaluator;
use crate::ir::BinOp;
use crate::thunk::Thunk;
use crate::value::Value;

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "add", arity: 2, func: |ev, a| op(ev, a, BinOp::Add) },
    BuiltinDef { name: "sub", arity: 2, func: |ev, a| op(ev, a, BinOp::Sub) },
    BuiltinDef { name: "mul", arity: 2, func: |ev, a| op(ev, a, BinOp::Mul) },
    BuiltinDef { name: "div", arity: 2, func: |ev, a| op(ev, a, BinOp::Div) },
    BuiltinDef { name: "bitAnd", arity: 2, func: |ev, a| bits(ev, a, "bitAnd", |x, y| x & y) },
    BuiltinDef { name: "bitOr", arity: 2, func: |ev, a| bits(ev, a, "bitOr", |x, y| x | y) },
    BuiltinDef { name: "bitXor", arity: 2, func: |ev, a| bits(ev, a, "bitXor", |x, y| x ^ y) },
    BuiltinDef { name: "lessThan", arity: 2, func: less_than },
    BuiltinDef { name: "ceil", arity: 1, func: |ev, a| round(ev, a, "ceil", f64::ceil) },
    BuiltinDef { name: "floor", arity: 1, func: |ev, a| round(ev, a, "floor", f64::floor) },
];

fn op(ev: &mut Evaluator, args: &[Thunk], op: BinOp) -> EvalResult<Value> {
    let a = ev.force(&args[0])?;
    let b = ev.force(&args[1])?;
    arith(op, &a, &b)
}

fn bits(ev: &mut Evaluator, args: &[Thunk], name: &str, f: fn(i64, i64) -> i64) -> EvalResult<Value> {
    let a = ev.int(&args[0], &format!("the first argument of builtins.{name}"))?;
    let b = ev.int(&args[1], &format!("the second argument of builtins.{name}"))?;
    Ok(Value::Int(f(a, b)))
}

fn less_than(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let a = ev.force(&args[0])?;
    let b = ev.force(&args[1])?;
    Ok(Value::Bool(compare(ev, &a, &b)? == std::cmp::Ordering::Less))
}

fn round(ev: &mut Evaluator, args: &[Thunk], name: &str, f: fn(f64) -> f64) -> EvalResult<Value> {
    match ev.force(&args[0])? {
        Value::Int(i) => Ok(Value::Int(i)),
        Value::Float(x) => {
            let r = f(x);
            if r.is_finite() && r >= i64::MIN as f64 && r < i64::MAX as f64 {
                Ok(Value::Int(r as i64))
            } else {
                Err(EvalError::new(ErrorKind::Overflow, format!("builtins.{name}: {x} does not fit in an integer")))
            }
        }
        v => Err(super::expected(&format!("the argument of builtins.{name}"), "a float", &v)),
    }
}

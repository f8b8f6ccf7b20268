//! Arithmetic and ordering on values. Integer arithmetic is checked: an
//! overflow is an error here, where Nix 2.8 silently wraps (a documented,
//! deliberate difference).

use std::cmp::Ordering;

use crate::error::{err, type_err, ErrorKind, EvalResult};
use crate::eval::{Evaluator, Walk, WATCH_DEPTH};
use crate::ir::BinOp;
use crate::value::Value;

fn symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        _ => "?",
    }
}

pub fn arith(op: BinOp, a: &Value, b: &Value) -> EvalResult<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            let (x, y) = (*x, *y);
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => {
                    if y == 0 {
                        return err(ErrorKind::DivisionByZero, "division by zero");
                    }
                    x.checked_div(y)
                }
                _ => unreachable!("only arithmetic operators reach arith()"),
            };
            r.map(Value::Int).ok_or_else(|| {
                crate::error::EvalError::new(ErrorKind::Overflow, format!("integer overflow in {x} {} {y}", symbol(op)))
            })
        }
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            let (x, y) = (as_f64(a), as_f64(b));
            Ok(Value::Float(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => {
                    if y == 0.0 {
                        return err(ErrorKind::DivisionByZero, "division by zero");
                    }
                    x / y
                }
                _ => unreachable!("only arithmetic operators reach arith()"),
            }))
        }
        _ => type_err(format!("cannot apply '{}' to {} and {}", symbol(op), a.type_article(), b.type_article())),
    }
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// Nix's `<`: numbers, strings, paths, and lists lexicographically. Two
/// distinct cyclic lists are infinite recursion, where Nix overflows.
pub fn compare(ev: &mut Evaluator, a: &Value, b: &Value) -> EvalResult<Ordering> {
    compare_in(ev, a, b, &mut Walk::watching_from(WATCH_DEPTH))
}

fn compare_in(ev: &mut Evaluator, a: &Value, b: &Value, walk: &mut Walk) -> EvalResult<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            Ok(as_f64(a).partial_cmp(&as_f64(b)).unwrap_or(Ordering::Equal))
        }
        (Value::String(x), Value::String(y)) => Ok(x.as_bytes().cmp(y.as_bytes())),
        (Value::Path(x), Value::Path(y)) => Ok(x.as_bytes().cmp(y.as_bytes())),
        (Value::List(x), Value::List(y)) => {
            let key = (x.as_ptr() as usize, y.as_ptr() as usize);
            ev.walk_into(walk, key, |ev, walk| {
                for (p, q) in x.iter().zip(y.iter()) {
                    let (p, q) = (ev.force(p)?, ev.force(q)?);
                    // Nix decides each position by equality first, then `<`.
                    if ev.equal(&p, &q)? {
                        continue;
                    }
                    return compare_in(ev, &p, &q, walk);
                }
                Ok(x.len().cmp(&y.len()))
            })
        }
        _ => type_err(format!("cannot compare {} with {}", a.type_article(), b.type_article())),
    }
}

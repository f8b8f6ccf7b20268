//! Data-format builtins: toJSON, fromJSON, fromTOML.

use super::pure::json::Data;
use super::{Args, BuiltinDef};
use crate::error::{ErrorKind, EvalError, EvalResult};
use crate::eval::Evaluator;
use crate::print::to_json;
use crate::thunk::Thunk;
use crate::value::{Attrs, Value};

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "toJSON", arity: 1, func: to_json_builtin },
    BuiltinDef { name: "fromJSON", arity: 1, func: from_json },
    BuiltinDef { name: "fromTOML", arity: 1, func: from_toml },
];

fn to_json_builtin(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let v = ev.force(&args[0])?;
    Ok(Value::string(to_json(ev, &v)?))
}

fn from_json(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let s = ev.str(&args[0], "the argument of builtins.fromJSON")?;
    let data = super::pure::json::from_json(&s)
        .map_err(|m| EvalError::new(ErrorKind::InvalidValue, format!("builtins.fromJSON: {m}")))?;
    Ok(from_data(data))
}

fn from_toml(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let s = ev.str(&args[0], "the argument of builtins.fromTOML")?;
    let data = super::pure::toml::from_toml(&s)
        .map_err(|m| EvalError::new(ErrorKind::InvalidValue, format!("builtins.fromTOML: {m}")))?;
    Ok(from_data(data))
}

/// Converts parsed data into a value; numbers keep their int/float kind.
pub fn from_data(d: Data) -> Value {
    match d {
        Data::Null => Value::Null,
        Data::Bool(b) => Value::Bool(b),
        Data::Int(i) => Value::Int(i),
        Data::Float(f) => Value::Float(f),
        Data::String(s) => Value::string(s),
        Data::List(items) => Value::list(items.into_iter().map(|x| Thunk::value(from_data(x))).collect()),
        Data::Attrs(entries) => Value::attrs(Attrs::from_sorted(
            entries.into_iter().map(|(k, v)| (k.into(), Thunk::value(from_data(v)))).collect(),
        )),
    }
}

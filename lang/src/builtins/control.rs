//! Control builtins: throw, abort, seq, deepSeq, trace, tryEval,
//! addErrorContext.

use super::{Args, BuiltinDef};
use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::eval::{CoerceMode, Evaluator};
use crate::print::print_value;
use crate::thunk::Thunk;
use crate::value::{Attrs, Value};

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "throw", arity: 1, func: throw },
    BuiltinDef { name: "abort", arity: 1, func: abort },
    BuiltinDef { name: "seq", arity: 2, func: seq },
    BuiltinDef { name: "deepSeq", arity: 2, func: deep_seq },
    BuiltinDef { name: "trace", arity: 2, func: trace },
    BuiltinDef { name: "tryEval", arity: 1, func: try_eval },
    BuiltinDef { name: "addErrorContext", arity: 2, func: add_error_context },
];

fn message(ev: &mut Evaluator, t: &Thunk) -> EvalResult<String> {
    let v = ev.force(t)?;
    let mut s = String::new();
    ev.coerce_to_string(&v, CoerceMode::Interpolation, &mut s)?;
    Ok(s)
}

fn throw(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let msg = message(ev, &args[0])?;
    Err(EvalError::new(ErrorKind::Thrown, msg))
}

fn abort(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let msg = message(ev, &args[0])?;
    Err(EvalError::new(ErrorKind::Aborted, format!("evaluation aborted with the following error message: '{msg}'")))
}

fn seq(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    ev.force(&args[0])?;
    ev.force(&args[1])
}

fn deep_seq(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let v = ev.force(&args[0])?;
    ev.deep_force(&v)?;
    ev.force(&args[1])
}

fn trace(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let v = ev.force(&args[0])?;
    let msg = match &v {
        Value::String(s) => s.to_string(),
        other => print_value(ev, other, false)?,
    };
    ev.trace_message(&msg);
    ev.force(&args[1])
}

fn try_eval(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let (success, value) = match ev.force(&args[0]) {
        Ok(v) => (true, v),
        Err(e) if e.kind.catchable() => (false, Value::Bool(false)),
        Err(e) => return Err(e),
    };
    Ok(Value::attrs(Attrs::from_unsorted(vec![
        ("success".into(), Thunk::value(Value::Bool(success))),
        ("value".into(), Thunk::value(value)),
    ])))
}

fn add_error_context(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    match ev.force(&args[1]) {
        Ok(v) => Ok(v),
        Err(e) => {
            let ctx =
                ev.str(&args[0], "the context of builtins.addErrorContext").map(|s| s.to_string()).unwrap_or_default();
            Err(e.context(ctx, None))
        }
    }
}

/// Nix builtins that need a Nix store (derivations, store paths, string
/// contexts), the network or the machine's environment: they exist (so
/// `builtins ? fetchurl` is true, as in Nix) but fail when used, saying
/// which of these they need.
pub const IMPURE: &[BuiltinDef] = &[
    BuiltinDef { name: "fetchurl", arity: 1, func: |_, _| impure("fetchurl") },
    BuiltinDef { name: "fetchTarball", arity: 1, func: |_, _| impure("fetchTarball") },
    BuiltinDef { name: "fetchGit", arity: 1, func: |_, _| impure("fetchGit") },
    BuiltinDef { name: "fetchTree", arity: 1, func: |_, _| impure("fetchTree") },
    BuiltinDef { name: "fetchMercurial", arity: 1, func: |_, _| impure("fetchMercurial") },
    BuiltinDef { name: "getEnv", arity: 1, func: |_, _| impure("getEnv") },
    BuiltinDef { name: "derivation", arity: 1, func: |_, _| needs_store("derivation") },
    BuiltinDef { name: "derivationStrict", arity: 1, func: |_, _| needs_store("derivationStrict") },
    BuiltinDef { name: "placeholder", arity: 1, func: |_, _| needs_store("placeholder") },
    BuiltinDef { name: "toFile", arity: 2, func: |_, _| needs_store("toFile") },
    BuiltinDef { name: "storePath", arity: 1, func: |_, _| needs_store("storePath") },
    BuiltinDef { name: "path", arity: 1, func: |_, _| needs_store("path") },
    BuiltinDef { name: "filterSource", arity: 2, func: |_, _| needs_store("filterSource") },
    BuiltinDef { name: "getContext", arity: 1, func: |_, _| needs_store("getContext") },
    BuiltinDef { name: "hasContext", arity: 1, func: |_, _| needs_store("hasContext") },
    BuiltinDef { name: "appendContext", arity: 2, func: |_, _| needs_store("appendContext") },
    BuiltinDef { name: "unsafeDiscardStringContext", arity: 1, func: |_, _| needs_store("unsafeDiscardStringContext") },
    BuiltinDef {
        name: "unsafeDiscardOutputDependency",
        arity: 1,
        func: |_, _| needs_store("unsafeDiscardOutputDependency"),
    },
];

/// The error a constant of [`UNAVAILABLE_CONSTANTS`] fails with.
pub type Refusal = fn() -> Box<EvalError>;

/// Nix's constants that kdeploy cannot give: each is there, and fails
/// when its value is used.
pub const UNAVAILABLE_CONSTANTS: &[(&str, Refusal)] = &[
    ("currentSystem", || {
        EvalError::new(ErrorKind::NotSupported, "builtins.currentSystem is not available in kdeploy").help(
            "the machine that evaluates a cluster must not change its value: name the platform in the \
             cluster instead (e.g. system = \"x86_64-linux\")",
        )
    }),
    ("currentTime", || impure_error("currentTime")),
    ("storeDir", || store_error("storeDir")),
];

fn impure(name: &str) -> EvalResult<Value> {
    Err(impure_error(name))
}

fn impure_error(name: &str) -> Box<EvalError> {
    EvalError::new(ErrorKind::NotSupported, format!("builtins.{name} is not available in kdeploy"))
        .help("evaluation is pure: no network, clock or environment; artifacts are declared as data (URL + checksum) in the stdlib")
}

fn needs_store(name: &str) -> EvalResult<Value> {
    Err(store_error(name))
}

fn store_error(name: &str) -> Box<EvalError> {
    EvalError::new(ErrorKind::NotSupported, format!("builtins.{name} needs a Nix store, which kdeploy does not have"))
        .help("kdeploy evaluates without a store: no derivations, store paths or string contexts; files are read from the project and artifacts are declared as data (URL + checksum)")
}

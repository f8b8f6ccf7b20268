//! The builtins table: every builtin's name, arity and implementation,
//! grouped in submodules by what they work on, plus the helpers builtins use
//! to demand arguments of a given type with Nix-style error messages.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::LazyLock;

use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::eval::Evaluator;
use crate::thunk::Thunk;
use crate::value::{Attrs, List, NixString, PartialBuiltin, Value};

mod arith;
mod attrs;
mod control;
mod files;
mod json;
mod lists;
pub mod pure;
mod sort;
mod strings;
mod types;
mod xml;

pub type BuiltinId = u16;
pub type BuiltinFn = fn(&mut Evaluator, &[Thunk]) -> EvalResult<Value>;

pub struct BuiltinDef {
    pub name: &'static str,
    pub arity: usize,
    pub func: BuiltinFn,
}

static ALL: LazyLock<Vec<BuiltinDef>> = LazyLock::new(|| {
    let groups: [&[BuiltinDef]; 11] = [
        control::IMPURE,
        arith::DEFS,
        attrs::DEFS,
        control::DEFS,
        files::DEFS,
        json::DEFS,
        lists::DEFS,
        strings::DEFS,
        types::DEFS,
        sort::DEFS,
        xml::DEFS,
    ];
    groups
        .into_iter()
        .flat_map(|g| g.iter())
        .map(|d| BuiltinDef { name: d.name, arity: d.arity, func: d.func })
        .collect()
});

/// Builtins that are also bound without the `builtins.` prefix, as in Nix.
const GLOBAL_NAMES: &[&str] = &[
    "abort",
    "baseNameOf",
    "derivation",
    "derivationStrict",
    "dirOf",
    "fetchGit",
    "fetchMercurial",
    "fetchTarball",
    "fetchTree",
    "fromTOML",
    "import",
    "isNull",
    "map",
    "placeholder",
    "removeAttrs",
    "scopedImport",
    "throw",
    "toString",
];

pub fn arity(id: BuiltinId) -> usize {
    ALL[id as usize].arity
}

pub fn name(id: BuiltinId) -> &'static str {
    ALL[id as usize].name
}

pub fn call(ev: &mut Evaluator, id: BuiltinId, args: &[Thunk]) -> EvalResult<Value> {
    (ALL[id as usize].func)(ev, args)
}

fn builtin_value(id: usize) -> Value {
    Value::Builtin(Rc::new(PartialBuiltin { id: id as BuiltinId, args: Vec::new() }))
}

/// The names in scope in every file: `builtins`, the global builtins,
/// `true`/`false`/`null`, and `__name` aliases of every builtin.
pub fn globals() -> HashMap<NixString, Value> {
    let mut set = Vec::new();
    let mut globals = HashMap::new();
    for (id, def) in ALL.iter().enumerate() {
        let v = builtin_value(id);
        set.push((NixString::from(def.name), Thunk::value(v.clone())));
        globals.insert(NixString::from(format!("__{}", def.name)), v.clone());
        if GLOBAL_NAMES.contains(&def.name) {
            globals.insert(NixString::from(def.name), v);
        }
    }
    let constants = [
        ("true", Value::Bool(true)),
        ("false", Value::Bool(false)),
        ("null", Value::Null),
        ("langVersion", Value::Int(6)),
        ("nixVersion", Value::string("2.8.0")),
    ];
    for (name, v) in constants {
        set.push((name.into(), Thunk::value(v.clone())));
        if !name.ends_with("Version") {
            globals.insert(name.into(), v);
        }
    }
    // What `<p>` looks in (through `__findFile`), as in Nix.
    set.push(("nixPath".into(), Thunk::value(files::search_path())));
    globals.insert("__nixPath".into(), files::search_path());
    // A global holds a value, so these are only in `builtins`: forcing one
    // is the error.
    for (name, error) in control::UNAVAILABLE_CONSTANTS {
        set.push(((*name).into(), Thunk::native(move |_| Err(error()))));
    }
    // `builtins.builtins` exists in Nix; a lazy self-reference keeps it cheap.
    let partial = Attrs::from_unsorted(set.clone());
    let builtins_set = Value::attrs(partial);
    set.push(("builtins".into(), Thunk::value(builtins_set)));
    let builtins_set = Value::attrs(Attrs::from_unsorted(set));
    globals.insert("builtins".into(), builtins_set);
    globals
}

/// Nix 2.8's `toString` of a float: C++'s `std::to_string`, six decimals.
pub fn float_to_string(f: f64) -> String {
    pure::float_fmt::format_float_tostring(f)
}

/// Typed access to builtin arguments.
pub(crate) trait Args {
    fn int(&mut self, t: &Thunk, what: &str) -> EvalResult<i64>;
    fn str(&mut self, t: &Thunk, what: &str) -> EvalResult<NixString>;
    fn list(&mut self, t: &Thunk, what: &str) -> EvalResult<List>;
    fn attrs(&mut self, t: &Thunk, what: &str) -> EvalResult<Rc<Attrs>>;
    fn func(&mut self, t: &Thunk, what: &str) -> EvalResult<Value>;
    fn call1(&mut self, f: &Value, a: Thunk) -> EvalResult<Value>;
}

pub(crate) fn expected(what: &str, wanted: &str, got: &Value) -> Box<EvalError> {
    EvalError::new(ErrorKind::Type, format!("{what} is {}, but {wanted} was expected", got.type_article()))
}

impl Args for Evaluator {
    fn int(&mut self, t: &Thunk, what: &str) -> EvalResult<i64> {
        match self.force(t)? {
            Value::Int(i) => Ok(i),
            v => Err(expected(what, "an integer", &v)),
        }
    }
    fn str(&mut self, t: &Thunk, what: &str) -> EvalResult<NixString> {
        match self.force(t)? {
            Value::String(s) => Ok(s),
            v => Err(expected(what, "a string", &v)),
        }
    }
    fn list(&mut self, t: &Thunk, what: &str) -> EvalResult<List> {
        match self.force(t)? {
            Value::List(l) => Ok(l),
            v => Err(expected(what, "a list", &v)),
        }
    }
    fn attrs(&mut self, t: &Thunk, what: &str) -> EvalResult<Rc<Attrs>> {
        match self.force(t)? {
            Value::Attrs(a) => Ok(a),
            v => Err(expected(what, "a set", &v)),
        }
    }
    fn func(&mut self, t: &Thunk, what: &str) -> EvalResult<Value> {
        match self.force(t)? {
            v if v.is_function() => Ok(v),
            Value::Attrs(a) if a.contains("__functor") => Ok(Value::Attrs(a)),
            v => Err(expected(what, "a function", &v)),
        }
    }
    fn call1(&mut self, f: &Value, a: Thunk) -> EvalResult<Value> {
        self.apply(f.clone(), a, None)
    }
}

/// Adds "while evaluating the Nth argument of builtins.X" to an error.
pub(crate) fn arg_context<T>(r: EvalResult<T>, n: &str, builtin: &str) -> EvalResult<T> {
    r.map_err(|e| e.context(format!("while evaluating the {n} argument passed to builtins.{builtin}"), None))
}

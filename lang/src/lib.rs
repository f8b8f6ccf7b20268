//! kdeploy-lang: a pure, lazy evaluator for the Nix expression language,
//! without derivations, the store, string context or fetchers. It knows
//! nothing about clusters. Pipeline: rnix parse → [`lower`] (scopes resolved)
//! → [`eval`] (memoised thunks) → [`print`]; all file access goes through
//! [`io::Io`], and errors are typed values rendered by [`diagnostic`].

mod arith;
pub mod builtins;
pub mod decode;
pub mod diagnostic;
mod env;
pub mod error;
pub mod eval;
mod guard;
mod guard_index;
mod indented;
pub mod io;
mod ir;
mod known;
pub mod limits;
mod load;
mod lower;
pub mod observed;
pub mod parse;
pub mod path;
pub mod print;
mod repeat;
pub mod source;
mod stack;
mod suggest;
mod syntax_hints;
pub mod thin;
pub mod thunk;
pub mod value;

mod entry;

pub use entry::{Arg, Session};
pub use error::{ErrorKind, EvalError, EvalResult};
pub use eval::Evaluator;
pub use value::Value;

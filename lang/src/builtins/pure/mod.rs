//! The parts of builtins that need no evaluator: POSIX regular expressions
//! with Nix 2.8's semantics, version strings, hashes, JSON and TOML parsing
//! into plain [`json::Data`], and Nix's float formats. Pure functions on std
//! types, each module tested against real Nix's answers.

pub mod float_fmt;
pub mod hash;
pub mod json;
pub mod regex;
pub mod toml;
pub mod versions;

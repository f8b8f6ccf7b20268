//! Parsing with rnix, behind a guard. rnix's parser is fine on the text
//! people write, but three kinds of hostile text make it slow or crash it:
//! a long run of characters without a space (`a.a.a…`, `1+1+1…`: its
//! tokenizer re-reads the rest of the run for every token in it, so the run
//! costs its length squared), deep nesting of lists, unary operators,
//! right-associative operators or `or` defaults (it recurses without a bound
//! and overflows the stack), and deep trees in general (its node cache
//! re-hashes every subtree as it grows). [`scan`] reads rnix's own tokens
//! once, in linear time, and refuses such text before rnix parses it; rnix
//! then parses on a stack of its own, so a case the scan misjudges costs
//! memory, never a crash.

mod scan;
mod shared;

pub use scan::{Refusal, MAX_NESTING};
pub use shared::Parses;

use rnix::ParseError;

/// rnix's stack: generous, since only the pages it touches are used.
const PARSE_STACK: usize = 256 << 20;

pub struct Parse {
    pub root: rnix::Root,
    /// rnix's errors, first first.
    pub errors: Vec<ParseError>,
}

/// Parses `text`, or says why it will not.
pub fn parse(text: &str) -> Result<Parse, Refusal> {
    let scanned = scan::scan(text)?;
    let parsed = stacker::grow(PARSE_STACK, || rnix::Root::parse(text));
    // rnix gives up on its own past 512 nested sub-expressions; the scan
    // normally refuses first, and where it did not, the refusal is the same.
    if parsed.errors().contains(&ParseError::RecursionLimitExceeded) {
        return Err(Refusal::TooDeep { at: scanned.deepest });
    }
    Ok(Parse { root: parsed.tree(), errors: parsed.errors().to_vec() })
}

#[cfg(test)]
mod tests;

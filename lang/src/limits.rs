//! The bounds that keep evaluation of hostile input finite and small: sizes
//! of lists and strings (checked before they are made), and a memory budget
//! for the whole evaluation, checked every few thousand evaluation steps and
//! before any large allocation. Nesting is bounded elsewhere: the parser's
//! [`crate::parse::MAX_NESTING`] and the evaluator's [`crate::eval::MAX_DEPTH`].
//! Going past any of them is an error with the code `kdeploy::too-large`
//! (or `kdeploy::too-deep`), never a crash.

use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};

/// The longest list, in elements (16 Mi: 384 MiB of elements alone).
pub const MAX_LIST: usize = 1 << 24;

/// The longest string, and the longest printed value, in bytes (256 MiB).
pub const MAX_STRING: usize = 1 << 28;

/// The memory budget when neither the machine nor `KDEPLOY_MAX_MEMORY`
/// says less: 2 GiB.
pub const DEFAULT_MEMORY: usize = 2 << 30;

/// Allocations from this size up check the budget before they are made.
const LARGE: usize = 1 << 20;

/// A value or computation bigger than kdeploy's limits.
#[cold]
pub(crate) fn too_large(message: String) -> Box<EvalError> {
    EvalError::new(ErrorKind::TooLarge, message)
}

/// An error if a list of `len` elements would be longer than [`MAX_LIST`].
pub(crate) fn check_list_len(len: usize) -> EvalResult<()> {
    if len > MAX_LIST {
        return Err(too_large(format!("a list of {len} elements is longer than the limit of {MAX_LIST}")));
    }
    Ok(())
}

/// An error if a string of `len` bytes would be longer than [`MAX_STRING`].
#[inline]
pub(crate) fn check_string_len(len: usize) -> EvalResult<()> {
    if len > MAX_STRING {
        return Err(string_too_long(len));
    }
    Ok(())
}

/// The error of [`check_string_len`], out of line so that the check stays
/// small enough to inline where strings are built piece by piece.
#[cold]
#[inline(never)]
fn string_too_long(len: usize) -> Box<EvalError> {
    too_large(format!("a string of {len} bytes is longer than the limit of {MAX_STRING} bytes"))
}

/// Appends `s`, unless `out` would outgrow [`MAX_STRING`]. Inlined: it runs
/// once per piece of every interpolation and `concatStringsSep`.
#[inline]
pub(crate) fn push_bounded(out: &mut String, s: &str) -> EvalResult<()> {
    check_string_len(out.len().saturating_add(s.len()))?;
    out.push_str(s);
    Ok(())
}

/// The memory budget of an evaluation: the resident memory of the process
/// may not grow past it from what it was when the evaluator was made (what
/// the process held before, such as a deployer's buffers, is not the
/// evaluation's). `KDEPLOY_MAX_MEMORY` (bytes, or with a `K`, `M` or `G`
/// suffix) sets it; else it is [`DEFAULT_MEMORY`], or half the machine's
/// memory if that is less.
pub(crate) struct Budget {
    pub limit: usize,
    base: usize,
}

impl Budget {
    pub fn from_env() -> Budget {
        let set = std::env::var("KDEPLOY_MAX_MEMORY").ok().and_then(|v| parse_size(&v));
        let limit = set.unwrap_or_else(|| match crate::io::physical_memory() {
            Some(total) => DEFAULT_MEMORY.min(total / 2),
            None => DEFAULT_MEMORY,
        });
        Budget { limit, base: crate::io::resident_memory().unwrap_or(0) }
    }

    /// An error if the process would use more than the budget with `more`
    /// bytes; checked only for large allocations, as reading the process's
    /// size costs system calls (small ones are caught by [`Budget::check_now`]
    /// every few thousand steps).
    pub fn check(&self, more: usize) -> EvalResult<()> {
        if more < LARGE {
            return Ok(());
        }
        self.check_with(more)
    }

    /// An error if the process already uses more than the budget.
    pub fn check_now(&self) -> EvalResult<()> {
        self.check_with(0)
    }

    fn check_with(&self, more: usize) -> EvalResult<()> {
        let Some(resident) = crate::io::resident_memory() else { return Ok(()) };
        let used = resident.saturating_sub(self.base);
        if used.saturating_add(more) > self.limit {
            let mib = |b: usize| b >> 20;
            return Err(too_large(format!(
                "the evaluation needs more than its memory budget of {} MiB ({} MiB in use{})",
                mib(self.limit),
                mib(used),
                if more > 0 { format!(", {} MiB more asked for", mib(more)) } else { String::new() },
            ))
            .help("set KDEPLOY_MAX_MEMORY (e.g. 8G) if the evaluation really needs more"));
        }
        Ok(())
    }
}

/// `1234`, `512K`, `64M`, `8G` (powers of 1024).
fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (digits, shift) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 10),
        (i, 'm' | 'M') => (&s[..i], 20),
        (i, 'g' | 'G') => (&s[..i], 30),
        _ => (s, 0),
    };
    digits.trim().parse::<usize>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1234"), Some(1234));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size(" 64m "), Some(64 << 20));
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn the_process_size_is_known() {
        let used = crate::io::resident_memory().expect("Linux reports the resident memory");
        assert!(used > 1 << 20 && used < 1 << 40, "{used}");
        assert!(crate::io::physical_memory().is_some_and(|m| m > used));
    }
}

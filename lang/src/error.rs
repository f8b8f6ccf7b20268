//! Typed evaluation errors. Every error has a stable code (shown to users and
//! matched by tests), a message, the span where it happened, and a bounded
//! chain of "while evaluating …" contexts. Rendering lives in `diagnostic.rs`.

use crate::source::Span;

pub type EvalResult<T> = Result<T, Box<EvalError>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Parse,
    UndefinedVariable,
    DuplicateAttribute,
    Type,
    MissingAttribute,
    MissingArgument,
    UnexpectedArgument,
    InfiniteRecursion,
    AssertionFailed,
    Thrown,
    Aborted,
    DivisionByZero,
    Overflow,
    OutOfBounds,
    NotCoercible,
    Forbidden,
    SearchPath,
    Io,
    InvalidValue,
    TooDeep,
    TooLarge,
    NotSupported,
}

impl ErrorKind {
    /// Stable, documented codes: tests and users may rely on them.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Parse => "kdeploy::parse",
            ErrorKind::UndefinedVariable => "kdeploy::undefined-variable",
            ErrorKind::DuplicateAttribute => "kdeploy::duplicate-attribute",
            ErrorKind::Type => "kdeploy::type",
            ErrorKind::MissingAttribute => "kdeploy::missing-attribute",
            ErrorKind::MissingArgument => "kdeploy::missing-argument",
            ErrorKind::UnexpectedArgument => "kdeploy::unexpected-argument",
            ErrorKind::InfiniteRecursion => "kdeploy::infinite-recursion",
            ErrorKind::AssertionFailed => "kdeploy::assertion-failed",
            ErrorKind::Thrown => "kdeploy::throw",
            ErrorKind::Aborted => "kdeploy::abort",
            ErrorKind::DivisionByZero => "kdeploy::division-by-zero",
            ErrorKind::Overflow => "kdeploy::integer-overflow",
            ErrorKind::OutOfBounds => "kdeploy::out-of-bounds",
            ErrorKind::NotCoercible => "kdeploy::not-coercible",
            ErrorKind::Forbidden => "kdeploy::forbidden-path",
            ErrorKind::SearchPath => "kdeploy::search-path",
            ErrorKind::Io => "kdeploy::io",
            ErrorKind::InvalidValue => "kdeploy::invalid-value",
            ErrorKind::TooDeep => "kdeploy::too-deep",
            ErrorKind::TooLarge => "kdeploy::too-large",
            ErrorKind::NotSupported => "kdeploy::not-supported",
        }
    }

    /// `builtins.tryEval` catches only these, as Nix does (a `<p>` not on
    /// the search path is a thrown error there).
    pub fn catchable(self) -> bool {
        matches!(self, ErrorKind::Thrown | ErrorKind::AssertionFailed | ErrorKind::SearchPath)
    }
}

/// One "while evaluating …" step; `repeat` counts identical steps in a row
/// (deep recursion), shown once.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub what: String,
    pub span: Option<Span>,
    pub repeat: usize,
}

#[derive(Debug, Clone)]
pub struct EvalError {
    pub kind: ErrorKind,
    pub message: String,
    pub span: Option<Span>,
    /// The label under the snippet, e.g. "this is a string".
    pub label: Option<String>,
    pub help: Option<String>,
    /// Other places that explain the error ("first defined here").
    pub notes: Vec<(String, Span)>,
    /// The innermost contexts, innermost first (at most [`MAX_INNER`]).
    pub context: Vec<Context>,
    /// The outermost contexts seen so far (at most [`MAX_OUTER`]), outermost last:
    /// the user's own call site is usually there.
    pub outer: Vec<Context>,
    /// Contexts dropped between the two.
    pub context_elided: usize,
}

pub const MAX_INNER: usize = 5;
pub const MAX_OUTER: usize = 2;

impl EvalError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Box<EvalError> {
        Box::new(EvalError {
            kind,
            message: message.into(),
            span: None,
            label: None,
            help: None,
            notes: Vec::new(),
            context: Vec::new(),
            outer: Vec::new(),
            context_elided: 0,
        })
    }

    /// All kept contexts, innermost first, with the elision point.
    pub fn contexts(&self) -> (&[Context], usize, &[Context]) {
        (&self.context, self.context_elided, &self.outer)
    }

    fn push_context(&mut self, what: String, span: Option<Span>) {
        let last = if self.outer.is_empty() { self.context.last_mut() } else { self.outer.last_mut() };
        if let Some(last) = last {
            if last.what == what && last.span == span {
                last.repeat += 1;
                return;
            }
        }
        let c = Context { what, span, repeat: 1 };
        if self.context.len() < MAX_INNER {
            self.context.push(c);
        } else {
            self.outer.push(c);
            if self.outer.len() > MAX_OUTER {
                let dropped = self.outer.remove(0);
                self.context_elided += dropped.repeat;
            }
        }
    }
}

/// Builder-style helpers on boxed errors, so call sites stay one line.
pub trait ErrorExt {
    fn at(self, span: Span) -> Self;
    fn at_if_unset(self, span: Option<Span>) -> Self;
    fn label(self, label: impl Into<String>) -> Self;
    fn help(self, help: impl Into<String>) -> Self;
    fn note(self, what: impl Into<String>, span: Span) -> Self;
    fn context(self, what: impl Into<String>, span: Option<Span>) -> Self;
}

impl ErrorExt for Box<EvalError> {
    fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }
    fn at_if_unset(mut self, span: Option<Span>) -> Self {
        if self.span.is_none() {
            self.span = span;
        }
        self
    }
    fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    fn note(mut self, what: impl Into<String>, span: Span) -> Self {
        self.notes.push((what.into(), span));
        self
    }
    fn context(mut self, what: impl Into<String>, span: Option<Span>) -> Self {
        self.push_context(what.into(), span);
        self
    }
}

pub fn err<T>(kind: ErrorKind, message: impl Into<String>) -> EvalResult<T> {
    Err(EvalError::new(kind, message))
}

pub fn type_err<T>(message: impl Into<String>) -> EvalResult<T> {
    err(ErrorKind::Type, message)
}

//! The lowered expression tree the evaluator walks. Names are already
//! resolved: a local variable is a (frame depth, slot) pair, a builtin is its
//! value, and only names under a `with` stay dynamic. Every node that can
//! fail carries the [`Span`] of its source.

use std::rc::Rc;

use crate::builtins::BuiltinId;
use crate::source::Span;
use crate::value::{NixString, Value};

pub type ExprRef = Rc<Expr>;

/// A plain one-byte tag: without it the compiler keeps the variant in a
/// niche of `Select`'s vector and decodes it with a compare, an xor and a
/// conditional move at every match, and the evaluator matches an
/// expression several times per step.
#[repr(u8)]
pub enum Expr {
    Const(Value),
    Local {
        depth: u32,
        index: u32,
        span: Span,
    },
    /// A name not bound lexically: looked up in the enclosing `with`
    /// namespaces (frame depths, innermost first).
    WithVar {
        name: NixString,
        withs: Rc<[u32]>,
        span: Span,
    },
    Str(Vec<StrPart>, Span),
    /// A path with interpolation: parts concatenated then normalised.
    Path(Vec<StrPart>, Span),
    List(Vec<ExprRef>),
    Attrs(Rc<AttrsDef>),
    /// Bindings evaluated in a new frame, then `body` in that frame.
    Let {
        frame: Vec<ExprRef>,
        body: ExprRef,
    },
    With {
        namespace: ExprRef,
        body: ExprRef,
        span: Span,
    },
    Lambda(Rc<Lambda>),
    Apply {
        func: ExprRef,
        arg: ExprRef,
        span: Span,
    },
    /// A builtin known when lowering (`hasAttr n s`, `builtins.length l`,
    /// or one bound by `inherit (builtins)` in a `let`) given exactly the
    /// arguments it takes: called directly, without evaluating its head
    /// or making partial applications in between.
    CallBuiltin {
        id: BuiltinId,
        fast: FastBuiltin,
        args: Box<[ExprRef]>,
        span: Span,
    },
    If {
        cond: ExprRef,
        then: ExprRef,
        else_: ExprRef,
        span: Span,
    },
    Assert {
        cond: ExprRef,
        body: ExprRef,
        span: Span,
    },
    Select {
        expr: ExprRef,
        path: Vec<AttrKey>,
        default: Option<ExprRef>,
        span: Span,
    },
    HasAttr {
        expr: ExprRef,
        path: Vec<AttrKey>,
        span: Span,
    },
    Binary {
        op: BinOp,
        lhs: ExprRef,
        rhs: ExprRef,
        span: Span,
    },
    Not(ExprRef, Span),
    Negate(ExprRef, Span),
    /// `__curPos`: a constant position set built at lowering time.
    CurPos(Span),
}

/// Builtins that [`Expr::CallBuiltin`] computes in place from their
/// arguments' values, without making a thunk per argument. Each forces its
/// arguments in the order, and checks them at the points, the builtin
/// itself does; any other case is left to the builtin.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FastBuiltin {
    None,
    HasAttr,
    IsAttrs,
    IsList,
    IsString,
    IsInt,
    IsBool,
    IsFunction,
    Length,
    /// A builtin of one argument that forces it before anything else
    /// (`head`, `tail`, `attrNames`, `attrValues`, `concatLists`,
    /// `listToAttrs`, `toString`, `typeOf`): the
    /// argument is evaluated in place and passed as a value, without a
    /// thunk allocated only to be forced at once.
    Strict,
}

pub enum StrPart {
    Lit(NixString),
    Interp(ExprRef, Span),
    /// `${toString arg}` with the global `toString` (span: the call's): the
    /// argument coerced straight into the string being built, without the
    /// intermediate string (and the builtin call) `toString` would make.
    ToString(ExprRef, Span),
}

#[derive(Clone)]
pub enum AttrKey {
    Static(NixString),
    Dynamic(ExprRef, Span),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Concat,
    Update,
    Eq,
    NotEq,
    Less,
    LessEq,
    Greater,
    GreaterEq,
    And,
    Or,
    Implies,
    PipeRight,
    PipeLeft,
}

/// An attribute-set literal. With `frame` set (for `rec` sets and sets that
/// use `inherit (e)`), the values are evaluated in a new frame whose slots
/// are `frame`; static values that are `Local` slots of that frame are shared.
pub struct AttrsDef {
    pub frame: Option<Vec<ExprRef>>,
    pub statics: Vec<StaticAttr>,
    pub dynamics: Vec<DynamicAttr>,
    /// The frame slot of a `rec` set's `__overrides` binding, whose
    /// attributes replace the set's own (in the set and in its scope) or
    /// join them, as in Nix.
    pub overrides: Option<u32>,
}

pub struct StaticAttr {
    pub name: NixString,
    pub value: ExprRef,
    pub span: Span,
}

pub struct DynamicAttr {
    pub key: ExprRef,
    pub value: ExprRef,
    pub span: Span,
}

pub struct Lambda {
    pub param: Param,
    pub body: ExprRef,
    pub span: Span,
    /// The name it was bound to, for error messages ("while calling 'f'").
    pub name: Option<NixString>,
    /// The argument's name (`x` in `x: …`, `all` in `{ … } @ all`), for
    /// `toXML`.
    pub arg: Option<NixString>,
}

pub enum Param {
    Ident,
    Pattern(Rc<Pattern>),
}

/// `{ a, b ? default, ... } @ whole`: slots are the formals in order, then
/// `whole` if bound.
pub struct Pattern {
    pub formals: Vec<Formal>,
    pub ellipsis: bool,
    pub bind: bool,
}

pub struct Formal {
    pub name: NixString,
    pub default: Option<ExprRef>,
    pub span: Span,
}

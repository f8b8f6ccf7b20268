//! The evaluator: walks the lowered [`Expr`] tree lazily. Thunks are forced
//! on demand and memoised; deep recursion grows the stack on the heap
//! (`stacker`) up to a bounded depth, so it either succeeds or reports
//! [`ErrorKind::TooDeep`], never crashes. All file access goes through the
//! [`Io`] boundary held here.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use crate::builtins::{self, BuiltinId};
use crate::env::Env;
use crate::error::{err, type_err, ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::io::Io;
use crate::ir::*;
use crate::known::{fast_unary, known_has_attr};
use crate::limits::{check_list_len, check_string_len, push_bounded, Budget};
use crate::lower::position_attrs;
use crate::path;
use crate::source::{Sources, Span};
use crate::suggest::did_you_mean;
use crate::thunk::{Begin, Lazy, State, Thunk};
use crate::value::*;

/// Evaluation depth (nested evaluations of expressions) at which evaluation
/// stops with an error instead of consuming memory without bound.
pub const MAX_DEPTH: usize = 1_000_000;

/// How deeply [`Evaluator::cheap`] looks into an expression.
pub(crate) const CHEAP_BUDGET: u32 = 4;

pub struct Evaluator {
    pub sources: Sources,
    pub io: Io,
    pub(crate) globals: Rc<HashMap<NixString, Value>>,
    /// Imported files by normalised path: each file is evaluated once.
    pub(crate) imports: HashMap<String, Thunk>,
    depth: usize,
    /// Lambdas entered by tail calls in frames still running, with their
    /// call sites: the "while calling" contexts of an error.
    calls: Vec<(Rc<Lambda>, Option<Span>)>,
    /// Compiled regular expressions by pattern, for `match` and `split`.
    pub(crate) regex_cache: HashMap<NixString, Rc<crate::builtins::pure::regex::NixRegex>>,
    /// Sets whose address the decoder gave out as an identity
    /// (`decode::SHARED`): a weak reference keeps the allocation, so no
    /// other set takes that address while this evaluator lives.
    pub(crate) identities: Vec<std::rc::Weak<Attrs>>,
    /// The syntax trees of the files parsed, shared with evaluators given
    /// a clone (`parse::Parses`): another thread evaluating the same files
    /// does not parse them again.
    pub parses: crate::parse::Parses,
    /// Where `builtins.trace` writes.
    pub trace: Box<dyn FnMut(&str)>,
    /// Steps left until the memory budget is checked again.
    ticks: u32,
    /// Evaluations nested in one another now (`depth` without the tail
    /// steps): what the stack checks in [`Self::eval`] are keyed to.
    nesting: u32,
    pub(crate) budget: Budget,
    /// The buffer strings with interpolations are built in
    /// ([`Self::interpolate_str`]).
    scratch: String,
    /// Lists scanned by `concatMap` with a `hasAttr` guard, indexed by name
    /// ([`crate::guard_index`]).
    pub(crate) guard_indexes: crate::guard_index::Indexes,
}

/// Largest scratch buffer kept between strings: one long string built
/// once should not hold its memory for the rest of the evaluation.
const SCRATCH_KEPT: usize = 4096;

/// The decimal digits of `i` in `buf`: what `write!("{i}")` gives, without
/// the formatting machinery (`toString` of integers is most of what some
/// string-building loops do). Two digits per division, from a table.
#[inline]
pub(crate) fn format_int(i: i64, buf: &mut [u8; 20]) -> &str {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut n = i.unsigned_abs();
    let mut at = buf.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    if i < 0 {
        // 19 digits at most (i64::MIN), so the sign still fits.
        at -= 1;
        buf[at] = b'-';
    }
    // SAFETY: every byte from `at` on was written above, from ASCII digits
    // and '-'; checking that costs more than the conversion itself.
    unsafe { std::str::from_utf8_unchecked(&buf[at..]) }
}

/// Evaluation steps between two checks of the memory budget (a few
/// milliseconds of work; a check reads one `/proc` file).
const TICKS: u32 = 1 << 16;

impl Evaluator {
    pub fn new(io: Io) -> Evaluator {
        crate::stack::prefer_huge_pages();
        Evaluator {
            sources: Sources::default(),
            io,
            globals: Rc::new(builtins::globals()),
            imports: HashMap::new(),
            depth: 0,
            calls: Vec::new(),
            regex_cache: HashMap::new(),
            identities: Vec::new(),
            parses: Default::default(),
            trace: Box::new(|msg| eprintln!("trace: {msg}")),
            ticks: TICKS,
            nesting: 0,
            budget: Budget::from_env(),
            scratch: String::new(),
            guard_indexes: Default::default(),
        }
    }

    /// A thunk for `expr` in `env`, without allocating when the value is
    /// already known (constants, variables of enclosing frames).
    pub(crate) fn thunk(&self, expr: &ExprRef, env: &Rc<Env>) -> Thunk {
        match &**expr {
            Expr::Const(v) => Thunk::value(v.clone()),
            Expr::Local { depth, index, .. } => env.lookup(*depth, *index),
            Expr::Lambda(l) => Thunk::value(Value::Lambda(Rc::new(Closure { lambda: l.clone(), env: env.clone() }))),
            // Only integer arithmetic and comparisons can be cheap; trying
            // `++`, `//` or `&&` would be wasted work on every thunk.
            Expr::Binary {
                op:
                    BinOp::Add
                    | BinOp::Sub
                    | BinOp::Mul
                    | BinOp::Div
                    | BinOp::Eq
                    | BinOp::NotEq
                    | BinOp::Less
                    | BinOp::LessEq
                    | BinOp::Greater
                    | BinOp::GreaterEq,
                ..
            }
            | Expr::Select { default: None, .. } => {
                // The commonest case, an operator on two integer leaves
                // (`n - 1`), without the general look of `cheap`.
                if let Expr::Binary { op, lhs, rhs, .. } = &**expr {
                    if let (Some(x), Some(y)) = (int_leaf(lhs, env), int_leaf(rhs, env)) {
                        if let Some(v) = cheap_int_op(*op, x, y) {
                            return Thunk::value(v);
                        }
                    }
                }
                // And the commonest select, `x.name` (`d.value`, `opt.type`),
                // read in place: what `cheap` would do, without its call.
                if let Expr::Select { expr: set, path, .. } = &**expr {
                    if let (Expr::Local { depth, index, .. }, [AttrKey::Static(name)]) = (&**set, &path[..]) {
                        let known = env.thunk_at(*depth, *index).and_then(|slot| {
                            slot.inspect(|v| match v {
                                Value::Attrs(a) => a.get(name)?.peek(),
                                _ => None,
                            })
                        });
                        return match known {
                            Some(v) => Thunk::value(v),
                            None => Thunk::pending(expr.clone(), env.clone()),
                        };
                    }
                }
                match self.cheap(expr, env, None, CHEAP_BUDGET) {
                    Some(v) => Thunk::value(v),
                    None => Thunk::pending(expr.clone(), env.clone()),
                }
            }
            _ => Thunk::pending(expr.clone(), env.clone()),
        }
    }

    /// The value of `expr` if it can be had without forcing a thunk, calling
    /// a function or failing (`n - 1` with `n` known, `x.name` with the
    /// attribute already evaluated). Computing such a value now instead of
    /// allocating a thunk for it cannot be observed: nothing runs that could
    /// fail, loop or trace. `arg` stands for the slot of a call frame not
    /// allocated yet (a single-parameter lambda's argument), so the frame's
    /// other depths are one less in `env`.
    pub(crate) fn cheap(&self, expr: &Expr, env: &Rc<Env>, arg: Option<&Thunk>, budget: u32) -> Option<Value> {
        match expr {
            Expr::Const(v) => Some(v.clone()),
            Expr::Local { depth, index, .. } => match arg {
                Some(a) if *depth == 0 => a.peek(),
                Some(_) => env.peek(depth - 1, *index),
                None => env.peek(*depth, *index),
            },
            Expr::Binary { op, lhs, rhs, .. } if budget > 0 => {
                let x = self.cheap_int(lhs, env, arg, budget)?;
                let y = self.cheap_int(rhs, env, arg, budget)?;
                cheap_int_op(*op, x, y)
            }
            Expr::Select { expr, path, default: None, .. } if budget > 0 => {
                // `x.name`, the common case, looks into `x` without cloning it.
                if let (Expr::Local { depth, index, .. }, [AttrKey::Static(name)]) = (&**expr, &path[..]) {
                    let t = match arg {
                        Some(a) if *depth == 0 => a,
                        Some(_) => env.thunk_at(depth - 1, *index)?,
                        None => env.thunk_at(*depth, *index)?,
                    };
                    return t.inspect(|v| match v {
                        Value::Attrs(a) => a.get(name)?.peek(),
                        _ => None,
                    });
                }
                let mut v = self.cheap(expr, env, arg, budget - 1)?;
                for key in path {
                    let AttrKey::Static(name) = key else { return None };
                    let Value::Attrs(a) = &v else { return None };
                    let next = a.get(name)?.peek()?;
                    v = next;
                }
                Some(v)
            }
            Expr::If { .. } | Expr::Not(..) | Expr::CallBuiltin { .. } if budget > 0 => {
                self.cheap_cond(expr, env, arg, budget)
            }
            _ => None,
        }
    }

    /// [`Self::cheap`] of a conditional, a negation or a builtin computed
    /// in place: `if hasAttr name d.value then [ … ] else [ ]` for most `d`
    /// (the module system's loop over definitions), `if d.priority < p
    /// then d.priority else p`, `!(hasAttr n decls)`. A condition that is
    /// not a Boolean is left to the evaluation proper (and its error). Out
    /// of line: [`Self::thunk`] tries `cheap` on every select and operator,
    /// and these cases would enlarge its frame.
    #[inline(never)]
    fn cheap_cond(&self, expr: &Expr, env: &Rc<Env>, arg: Option<&Thunk>, budget: u32) -> Option<Value> {
        match expr {
            Expr::If { cond, then, else_, .. } => {
                let next = if self.cheap_bool(cond, env, arg, budget - 1)? { then } else { else_ };
                self.cheap(next, env, arg, budget - 1)
            }
            Expr::Not(e, _) => Some(Value::Bool(!self.cheap_bool(e, env, arg, budget - 1)?)),
            Expr::CallBuiltin { fast, args, .. } => match (fast, &args[..]) {
                (FastBuiltin::HasAttr, [name, set]) => known_has_attr(name, set, env, arg).map(Value::Bool),
                (FastBuiltin::None | FastBuiltin::HasAttr | FastBuiltin::Strict, _) => None,
                (_, [a]) => fast_unary(*fast, &self.cheap(a, env, arg, budget - 1)?),
                _ => None,
            },
            _ => None,
        }
    }

    /// [`Self::cheap`] of a condition if it is a Boolean.
    #[inline(always)]
    fn cheap_bool(&self, expr: &Expr, env: &Rc<Env>, arg: Option<&Thunk>, budget: u32) -> Option<bool> {
        match self.cheap(expr, env, arg, budget)? {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// [`Self::cheap`] of an operand if it is an integer (the only
    /// operands a cheap operator takes), the common leaves read in place.
    #[inline(always)]
    fn cheap_int(&self, expr: &Expr, env: &Rc<Env>, arg: Option<&Thunk>, budget: u32) -> Option<i64> {
        let int = |v: &Value| match v {
            Value::Int(i) => Some(*i),
            _ => None,
        };
        match (expr, arg) {
            (Expr::Const(v), _) => int(v),
            (Expr::Local { depth, index, .. }, None) => env.thunk_at(*depth, *index)?.inspect(int),
            (Expr::Local { depth: 0, .. }, Some(a)) => a.inspect(int),
            _ => int(&self.cheap(expr, env, arg, budget - 1)?),
        }
    }

    /// `f x` computed now if that is [`Self::cheap`]: `f` a single-parameter
    /// lambda whose body needs nothing but known values.
    pub(crate) fn cheap_apply(&self, f: &Value, arg: &Thunk) -> Option<Value> {
        match f {
            Value::Lambda(c) if matches!(c.lambda.param, Param::Ident) => {
                self.cheap(&c.lambda.body, &c.env, Some(arg), CHEAP_BUDGET)
            }
            _ => None,
        }
    }

    /// Like [`Self::thunk`] but for the slots of a frame being filled, where
    /// a slot of the same frame may not exist yet.
    fn frame_thunk(&self, expr: &ExprRef, env: &Rc<Env>) -> Thunk {
        match &**expr {
            Expr::Local { depth: 0, .. } => Thunk::pending(expr.clone(), env.clone()),
            _ => self.thunk(expr, env),
        }
    }

    /// The value of a thunk, evaluating it on first demand. The fast paths
    /// (known value, already evaluated) stay inline; the rest is out of line
    /// so that deep recursion keeps small stack frames.
    #[inline]
    pub fn force(&mut self, t: &Thunk) -> EvalResult<Value> {
        match t.cell() {
            None => Ok(t.peek().expect("a thunk without a cell holds a value")),
            Some(cell) => {
                if let Some(v) = cell.done() {
                    return Ok(v.clone());
                }
                self.force_cell(cell)
            }
        }
    }

    #[inline(never)]
    fn force_cell(&mut self, cell: &Rc<Lazy>) -> EvalResult<Value> {
        let (expr, env) = match cell.begin() {
            Begin::Pending(expr, env) => (expr, env),
            Begin::Blackhole(span) => return Err(infinite_recursion(span)),
            Begin::Other(other) => return self.force_other(cell, other),
        };
        let r = self.eval(&expr, &env);
        // The cell still holds the black hole put there above (a nested
        // force of it stops at the black hole, and nothing else writes it).
        let next = match &r {
            Ok(v) => State::Done(v.clone()),
            Err(_) => State::Pending(expr, env),
        };
        cell.fill_hole(next);
        r
    }

    /// Applications and native computations: less common, kept apart.
    #[inline(never)]
    fn force_other(&mut self, cell: &Rc<Lazy>, state: State) -> EvalResult<Value> {
        let result = match state {
            State::Apply1(f, arg) => {
                let r = self.apply(f.clone(), arg.clone(), None);
                if r.is_err() {
                    cell.replace(State::Apply1(f, arg));
                }
                r
            }
            State::Apply(parts) => {
                // The function first (a known value), then its arguments.
                let r = match &parts[..] {
                    [f, a, b] => match f.known() {
                        Some(f) => self.apply2(f, a.clone(), b.clone()),
                        None => self.force(f).and_then(|f| self.apply2(&f, a.clone(), b.clone())),
                    },
                    [f, args @ ..] => self.force(f).and_then(|f| self.apply_all(f, args, None)),
                    [] => unreachable!("an application holds its function"),
                };
                if r.is_err() {
                    cell.replace(State::Apply(parts));
                }
                r
            }
            State::Native(f) => f(self),
            State::Pending(..) | State::Blackhole(_) | State::Done(_) => unreachable!("handled by force_cell"),
        };
        match &result {
            // Still the black hole of `force_cell` (only a failure above
            // writes the cell).
            Ok(v) => cell.fill_hole(State::Done(v.clone())),
            Err(e) => {
                if cell.is_blackhole() {
                    // A failed native computation cannot be re-run: keep its error.
                    let e = (**e).clone();
                    cell.replace(State::Native(Box::new(move |_| Err(Box::new(e)))));
                }
            }
        }
        result
    }

    #[inline(always)]
    pub fn eval(&mut self, expr: &ExprRef, env: &Rc<Env>) -> EvalResult<Value> {
        self.depth += 1;
        self.nesting += 1;
        // Checking the stack costs a little: every 8 levels of nesting is
        // enough, the red zone covers far more than 8 frames. Counted by
        // nesting, not by `depth`: tail steps add to the depth too, so a
        // recursion adding the same multiple of 8 to the depth per level
        // (a call and a tail step per level, or seven tail steps) would
        // meet one remainder at every level and never be checked.
        let r = if self.nesting & 7 != 0 { self.eval_inner(expr, env) } else { self.eval_checked(expr, env) };
        self.nesting -= 1;
        self.depth -= 1;
        r
    }

    /// The body of a function a builtin calls once per element (`filter`,
    /// `concatMap`, …). The usual `d: if hasAttr name d.value then [ … ]
    /// else [ ]` has its condition and a constant branch had here, without
    /// a turn of the general evaluation step; anything else is [`Self::eval`].
    #[inline(always)]
    pub(crate) fn eval_body(&mut self, body: &ExprRef, env: &Rc<Env>) -> EvalResult<Value> {
        if let Expr::If { cond, then, else_, span } = &**body {
            if let Expr::CallBuiltin { .. } | Expr::Binary { .. } = &**cond {
                let next = if self.eval_bool(cond, env, *span, "the condition of 'if'")? { then } else { else_ };
                if let Expr::Const(v) = &**next {
                    return Ok(v.clone());
                }
                return self.eval(next, env);
            }
        }
        self.eval(body, env)
    }

    /// Every [`TICKS`] steps: an error at `expr` if the evaluation has
    /// outgrown its memory budget.
    #[cold]
    #[inline(never)]
    fn check_memory(&mut self, expr: &Expr) -> EvalResult<()> {
        self.ticks = TICKS;
        self.budget.check_now().map_err(|e| e.at_if_unset(expr_span(expr)))
    }

    /// An error if `bytes` more (a large list or string about to be made)
    /// would take the evaluation past its memory budget.
    pub(crate) fn reserve(&self, bytes: usize) -> EvalResult<()> {
        self.budget.check(bytes)
    }

    /// Room for a list of `len` elements: within [`MAX_LIST`] and the budget
    /// (counting a lazy cell per element, as `map` and `genList` make).
    pub(crate) fn reserve_list(&self, len: usize) -> EvalResult<()> {
        check_list_len(len)?;
        self.reserve(len.saturating_mul(std::mem::size_of::<Thunk>() + 64))
    }

    /// Room for a string of `len` bytes: within [`MAX_STRING`] and the budget.
    pub(crate) fn reserve_string(&self, len: usize) -> EvalResult<()> {
        check_string_len(len)?;
        self.reserve(len)
    }

    #[inline(never)]
    fn eval_checked(&mut self, expr: &ExprRef, env: &Rc<Env>) -> EvalResult<Value> {
        if self.depth > MAX_DEPTH {
            return Err(too_deep(expr));
        }
        stacker::maybe_grow(256 * 1024, 64 * 1024 * 1024, || self.eval_inner(expr, env))
    }

    /// Evaluates `expr`, running tail positions (`if` branches, `let`/`with`/
    /// `assert` bodies, the body of a called lambda) in this same frame: deep
    /// recursion then costs a few Rust frames per call, not one per
    /// construct. Calls made this way are remembered in `self.calls` so an
    /// error still names them ("while calling 'f'").
    #[inline(always)]
    fn eval_inner(&mut self, expr: &ExprRef, env: &Rc<Env>) -> EvalResult<Value> {
        let mark = self.calls.len();
        match self.step(expr, env)? {
            Step::Value(v) => Ok(v),
            Step::Tail(next, next_env) => self.eval_tail(next, next_env, mark),
            Step::Same(next) => self.eval_tail(next, env.clone(), mark),
        }
    }

    /// The rest of [`Self::eval_inner`] once a tail position was reached.
    #[inline(never)]
    fn eval_tail(&mut self, mut expr: ExprRef, mut env: Rc<Env>, mark: usize) -> EvalResult<Value> {
        let mut tails = 0;
        let result = loop {
            tails += 1;
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                break Err(too_deep(&expr));
            }
            match self.step(&expr, &env) {
                Ok(Step::Value(x)) => break Ok(x),
                Ok(Step::Tail(next, next_env)) => {
                    expr = next;
                    env = next_env;
                }
                Ok(Step::Same(next)) => expr = next,
                Err(err) => break Err(err),
            }
        };
        self.depth -= tails;
        if self.calls.len() > mark {
            match result {
                Ok(_) => self.calls.truncate(mark),
                Err(mut e) => {
                    for (lambda, span) in self.calls.drain(mark..).rev() {
                        e = call_context(e, &lambda, span);
                    }
                    return Err(e);
                }
            }
        }
        result
    }

    #[inline]
    fn step(&mut self, expr: &ExprRef, env: &Rc<Env>) -> EvalResult<Step> {
        self.ticks -= 1;
        if self.ticks == 0 {
            self.check_memory(expr)?;
        }
        let v = match &**expr {
            Expr::Const(v) => Ok(v.clone()),
            Expr::Local { depth, index, .. } => match env.get(*depth, *index) {
                Ok(v) => Ok(v),
                Err(t) => self.force(&t),
            },
            Expr::Attrs(def) => self.build_attrs(def, env),
            Expr::Str(parts, _) => Ok(Value::String(self.interpolate_str(parts, env)?)),
            Expr::Let { frame, body } => {
                let frame_env = self.fill_frame(frame, env);
                return Ok(Step::Tail(body.clone(), frame_env));
            }
            Expr::Lambda(l) => Ok(Value::Lambda(Rc::new(Closure { lambda: l.clone(), env: env.clone() }))),
            Expr::Apply { func, arg, span } => return self.step_apply(func, arg, *span, env),
            Expr::If { cond, then, else_, span } => {
                let next = if self.eval_bool(cond, env, *span, "the condition of 'if'")? { then } else { else_ };
                // A branch that is not itself in tail position inside
                // (a constant, a variable, an operator, a select: `else [ ]`,
                // `else 1 + f (n - 1)`) is had here, without another turn of
                // the tail loop; the others (calls, `let`, nested `if`)
                // continue in it.
                match &**next {
                    Expr::Const(v) => Ok(v.clone()),
                    Expr::Local { depth, index, .. } => match env.get(*depth, *index) {
                        Ok(v) => Ok(v),
                        Err(t) => self.force(&t),
                    },
                    Expr::Binary { op, lhs, rhs, span } => self.binary(*op, lhs, rhs, *span, env),
                    Expr::Select { expr, path, default, span } => self.select(expr, path, default.as_ref(), *span, env),
                    Expr::CallBuiltin { id, fast, args, span } => self.builtin_call(*id, *fast, args, *span, env),
                    _ => return Ok(Step::Same(next.clone())),
                }
            }
            Expr::Select { expr, path, default, span } => self.select(expr, path, default.as_ref(), *span, env),
            Expr::Binary { op, lhs, rhs, span } => self.binary(*op, lhs, rhs, *span, env),
            Expr::CallBuiltin { id, fast, args, span } => self.builtin_call(*id, *fast, args, *span, env),
            _ => return self.step_other(expr, env),
        };
        v.map(Step::Value)
    }

    /// A call, out of line: its locals (a spine's arguments, the function's
    /// value) would otherwise enlarge [`Self::step`]'s frame, which stays on
    /// the stack at every level of a deep recursion, while a call in tail
    /// position returns before the body it leads to is run.
    #[inline(never)]
    fn step_apply(&mut self, func: &ExprRef, arg: &ExprRef, span: Span, env: &Rc<Env>) -> EvalResult<Step> {
        let f = match &**func {
            Expr::Apply { func: inner, arg: first, span: inner_span } => {
                match self.apply_spine(inner, first, *inner_span, arg, span, env)? {
                    Spine::Done(v) => return Ok(Step::Value(v)),
                    Spine::Func(f) => f,
                }
            }
            Expr::Local { depth, index, .. } => match env.own_lambda(*depth, *index) {
                Some((lambda, scope)) => {
                    let a = self.thunk(arg, env);
                    return self.enter(lambda, scope, a, span);
                }
                None => self.operand(func, env)?,
            },
            _ => self.operand(func, env)?,
        };
        let a = self.thunk(arg, env);
        match f {
            Value::Lambda(c) => self.enter(c.lambda.clone(), &c.env, a, span),
            other => self.apply_other(other, a, Some(span)).map(Step::Value),
        }
    }

    /// A call in tail position: the body of `lambda` to run next, in a
    /// frame under `scope` binding `arg`.
    #[inline(always)]
    fn enter(&mut self, lambda: Rc<Lambda>, scope: &Rc<Env>, arg: Thunk, span: Span) -> EvalResult<Step> {
        let call_env = self.bind_args(&lambda, scope, arg, Some(span))?;
        let body = lambda.body.clone();
        // `Vec::push` is left out of line here; the room is made first
        // (rarely: the vector only grows with the deepest chain of calls)
        // and the entry written in place.
        self.calls.reserve(1);
        let len = self.calls.len();
        // SAFETY: `reserve(1)` made room for one more entry at `len`, and
        // the length counts it only once it is written.
        unsafe {
            self.calls.as_mut_ptr().add(len).write((lambda, Some(span)));
            self.calls.set_len(len + 1);
        }
        Ok(Step::Tail(body, call_env))
    }

    /// An [`Expr::CallBuiltin`]: the builtin `id` called with `args`. The
    /// builtins of [`FastBuiltin`] are computed here from their arguments'
    /// values when these are of the expected types (no thunk made per
    /// argument); otherwise, and for every other builtin, it is called
    /// with thunks as an application would call it, the values already
    /// had passed on, so nothing is evaluated twice or in another order.
    #[inline(never)]
    fn builtin_call(
        &mut self,
        id: BuiltinId,
        fast: FastBuiltin,
        args: &[ExprRef],
        span: Span,
        env: &Rc<Env>,
    ) -> EvalResult<Value> {
        let at = |e: Box<EvalError>| e.at_if_unset(Some(span));
        match (fast, args) {
            (FastBuiltin::None, _) => {}
            (FastBuiltin::Strict, [arg]) => {
                // As the builtin would: its argument forced first.
                let v = self.operand(arg, env).map_err(at)?;
                return self.call_builtin(id, &[Thunk::value(v)], Some(span));
            }
            (FastBuiltin::HasAttr, [name, set]) => {
                // Both already known (`hasAttr name d.value` in a loop):
                // looked at in place, no count taken or dropped.
                if let Some(b) = known_has_attr(name, set, env, None) {
                    return Ok(Value::Bool(b));
                }
                // As the builtin: the name forced and checked first, then
                // the set.
                let n = self.operand(name, env).map_err(at)?;
                let Value::String(key) = &n else {
                    return self.call_builtin(id, &[Thunk::value(n), self.thunk(set, env)], Some(span));
                };
                // A set already known (`hasAttr name d.value` in a loop) is
                // looked at in place.
                if let Some(b) = self.peek_in(set, env, |v| match v {
                    Value::Attrs(a) => Some(a.contains(key)),
                    _ => None,
                }) {
                    return Ok(Value::Bool(b));
                }
                let s = self.operand(set, env).map_err(at)?;
                if let Value::Attrs(a) = &s {
                    return Ok(Value::Bool(a.contains(key)));
                }
                return self.call_builtin(id, &[Thunk::value(n), Thunk::value(s)], Some(span));
            }
            (_, [arg]) => {
                // The predicates force their argument first (and only it).
                if let Some(v) = self.peek_in(arg, env, |v| fast_unary(fast, v)) {
                    return Ok(v);
                }
                let v = self.operand(arg, env).map_err(at)?;
                if let Some(r) = fast_unary(fast, &v) {
                    return Ok(r);
                }
                return self.call_builtin(id, &[Thunk::value(v)], Some(span));
            }
            _ => {}
        }
        match args {
            [a] => {
                let t = [self.thunk(a, env)];
                self.call_builtin(id, &t, Some(span))
            }
            [a, b] => {
                let t = [self.thunk(a, env), self.thunk(b, env)];
                self.call_builtin(id, &t, Some(span))
            }
            [a, b, c] => {
                let t = [self.thunk(a, env), self.thunk(b, env), self.thunk(c, env)];
                self.call_builtin(id, &t, Some(span))
            }
            _ => {
                let t: Vec<Thunk> = args.iter().map(|a| self.thunk(a, env)).collect();
                self.call_builtin(id, &t, Some(span))
            }
        }
    }

    /// `f` of the value of `e` when that is already known, looked at in
    /// place: a constant, a variable, or `x.name` of a variable `x`, each
    /// already evaluated. Nothing is forced, cloned or dropped.
    #[inline(always)]
    fn peek_in<R>(&self, e: &Expr, env: &Rc<Env>, f: impl FnOnce(&Value) -> Option<R>) -> Option<R> {
        // One call of `f`, at the end: one copy of its code, inlined.
        let slot;
        let outer;
        let inner;
        let v = match e {
            Expr::Const(v) => v,
            Expr::Local { depth, index, .. } => {
                slot = env.thunk_at(*depth, *index)?;
                outer = slot.known()?;
                outer
            }
            Expr::Select { expr, path, default: None, .. } => {
                let (Expr::Local { depth, index, .. }, [AttrKey::Static(name)]) = (&**expr, &path[..]) else {
                    return None;
                };
                slot = env.thunk_at(*depth, *index)?;
                outer = slot.known()?;
                let Value::Attrs(a) = outer else { return None };
                inner = a.get(name)?.known()?;
                inner
            }
            _ => return None,
        };
        f(v)
    }

    /// The less common cases of [`Self::step`], out of line so that its
    /// frame (on the stack at every level of a deep recursion) stays small.
    #[inline(never)]
    fn step_other(&mut self, expr: &ExprRef, env: &Rc<Env>) -> EvalResult<Step> {
        let v = match &**expr {
            Expr::WithVar { name, withs, span } => self.with_var(name, withs, *span, env),
            Expr::Path(parts, span) => {
                let s = self.interpolate(parts, env)?;
                if !path::is_absolute(&s) {
                    return err(ErrorKind::InvalidValue, format!("path '{s}' is not absolute"))
                        .map_err(|e| e.at(*span));
                }
                Ok(Value::Path(path::normalize(&s).into()))
            }
            // Collected straight into the shared slice: one allocation, not
            // a vector and then a copy of it.
            Expr::List(items) => Ok(Value::List(items.iter().map(|i| self.thunk(i, env)).collect())),
            Expr::With { namespace, body, .. } => {
                let ns = self.thunk(namespace, env);
                let with_env = Env::with_one(env, ns);
                return Ok(Step::Tail(body.clone(), with_env));
            }
            Expr::Assert { cond, body, span } => {
                if self.eval_bool(cond, env, *span, "the condition of 'assert'")? {
                    return Ok(Step::Same(body.clone()));
                } else {
                    Err(EvalError::new(ErrorKind::AssertionFailed, "assertion failed")
                        .at(*span)
                        .label("this assertion is false"))
                }
            }
            Expr::HasAttr { expr, path, .. } => self.has_attr(expr, path, env),
            Expr::Not(e, span) => Ok(Value::Bool(!self.eval_bool(e, env, *span, "the operand of '!'")?)),
            Expr::Negate(e, span) => match self.eval(e, env)? {
                Value::Int(i) => i.checked_neg().map(Value::Int).ok_or_else(|| {
                    EvalError::new(ErrorKind::Overflow, format!("integer overflow in -({i})")).at(*span)
                }),
                Value::Float(f) => Ok(Value::Float(-f)),
                v => type_err(format!("cannot negate {}: unary '-' needs an integer or a float", v.type_article()))
                    .map_err(|e| e.at(*span)),
            },
            Expr::CurPos(span) => {
                let (line, col) = self.sources.line_col(*span);
                Ok(position_attrs(&self.sources.get(span.file).name, line, col))
            }
            _ => unreachable!("handled by step()"),
        };
        v.map(Step::Value)
    }

    /// The function of `inner first last`, evaluated up to the last
    /// argument; or the whole call when the head is a builtin taking exactly
    /// these two or three arguments, which then gets them at once instead
    /// of through partial applications (a vector and a set of arguments
    /// allocated per argument).
    #[inline(never)]
    fn apply_spine(
        &mut self,
        inner: &ExprRef,
        first: &ExprRef,
        inner_span: Span,
        last: &ExprRef,
        span: Span,
        env: &Rc<Env>,
    ) -> EvalResult<Spine> {
        if let Expr::Apply { func: head, arg: zeroth, span: head_span } = &**inner {
            let h = match self.spine_head(head, env, 3)? {
                Ok(id) => {
                    let args = [self.thunk(zeroth, env), self.thunk(first, env), self.thunk(last, env)];
                    return self.call_builtin(id, &args, Some(span)).map(Spine::Done);
                }
                Err(h) => h,
            };
            let t = self.thunk(zeroth, env);
            let g = self.apply(h, t, Some(*head_span))?;
            let t = self.thunk(first, env);
            return self.apply(g, t, Some(inner_span)).map(Spine::Func);
        }
        let g = match self.spine_head(inner, env, 2)? {
            Ok(id) => {
                let args = [self.thunk(first, env), self.thunk(last, env)];
                return self.call_builtin(id, &args, Some(span)).map(Spine::Done);
            }
            Err(g) => g,
        };
        let t = self.thunk(first, env);
        self.apply(g, t, Some(inner_span)).map(Spine::Func)
    }

    /// The head of a call spine: `Ok` with the id of a builtin taking
    /// exactly `arity` arguments, none given yet, else `Err` with the
    /// head's value. A head already known (`hasAttr` bound by `inherit
    /// (builtins)`) is read in place, without cloning and dropping the
    /// function value around every call.
    #[inline(always)]
    fn spine_head(&mut self, e: &ExprRef, env: &Rc<Env>, arity: usize) -> EvalResult<Result<BuiltinId, Value>> {
        let known = match &**e {
            Expr::Const(v) => builtin_taking(v, arity),
            Expr::Local { depth, index, .. } => {
                env.thunk_at(*depth, *index).and_then(|t| t.inspect(|v| builtin_taking(v, arity)))
            }
            _ => None,
        };
        if let Some(known) = known {
            return Ok(Ok(known));
        }
        let v = self.operand(e, env)?;
        Ok(builtin_taking(&v, arity).ok_or(v))
    }

    /// Evaluates an operand; constants and variables skip the general
    /// machinery of [`Self::eval`].
    #[inline]
    fn operand(&mut self, e: &ExprRef, env: &Rc<Env>) -> EvalResult<Value> {
        match &**e {
            Expr::Const(v) => Ok(v.clone()),
            Expr::Local { depth, index, .. } => match env.get(*depth, *index) {
                Ok(v) => Ok(v),
                Err(t) => self.force(&t),
            },
            _ => self.eval(e, env),
        }
    }

    #[inline(never)]
    fn fill_frame(&self, frame: &[ExprRef], parent: &Rc<Env>) -> Rc<Env> {
        let env = Env::child(parent, frame.len());
        for e in frame {
            match &**e {
                Expr::Lambda(l) => env.push_own_lambda(l.clone()),
                _ => env.push(self.frame_thunk(e, &env)),
            }
        }
        env
    }

    /// [`Self::fill_frame`] for a `rec` set with `__overrides`, which may
    /// replace any of its slots once it is filled: nothing is read from the
    /// frame while filling it, or a slot worked out from another at once
    /// (`b = a + 1`, `c = x.n`) would keep the value from before the
    /// override (Nix: `rec { a = 1; b = a + 1; __overrides.a = 10; }.b` is 11).
    #[cold]
    fn fill_frame_lazily(frame: &[ExprRef], parent: &Rc<Env>) -> Rc<Env> {
        let env = Env::child(parent, frame.len());
        for e in frame {
            match &**e {
                Expr::Lambda(l) => env.push_own_lambda(l.clone()),
                Expr::Const(v) => env.push(Thunk::value(v.clone())),
                _ => env.push(Thunk::pending(e.clone(), env.clone())),
            }
        }
        env
    }

    #[inline(never)]
    fn eval_bool(&mut self, e: &ExprRef, env: &Rc<Env>, span: Span, what: &str) -> EvalResult<bool> {
        // A comparison (the usual condition) skips the general machinery:
        // its operands still go through `eval`, which bounds the depth.
        let v = match &**e {
            Expr::Binary { op, lhs, rhs, span } => self.binary(*op, lhs, rhs, *span, env)?,
            Expr::CallBuiltin { id, fast, args, span } => self.builtin_call(*id, *fast, args, *span, env)?,
            _ => self.operand(e, env)?,
        };
        if let Value::Bool(b) = v {
            // A Boolean owns nothing: no call of the drop glue, which the
            // compiler leaves in place for a match by value.
            std::mem::forget(v);
            return Ok(b);
        }
        Err(not_bool(what, &v, expr_span(e).unwrap_or(span)))
    }

    #[inline(never)]
    fn with_var(&mut self, name: &NixString, withs: &[u32], span: Span, env: &Rc<Env>) -> EvalResult<Value> {
        for &depth in withs {
            let ns = match env.get(depth, 0) {
                Ok(v) => v,
                Err(t) => self.force(&t)?,
            };
            match ns {
                Value::Attrs(a) => {
                    if let Some(t) = a.get(name) {
                        return self.force(t);
                    }
                }
                v => {
                    return type_err(format!("the namespace of 'with' is {}, but a set was expected", v.type_article()))
                        .map_err(|e| e.at(span))
                }
            }
        }
        Err(EvalError::new(ErrorKind::UndefinedVariable, format!("undefined variable '{name}'"))
            .at(span)
            .label("not bound here, nor by any enclosing 'with'"))
    }

    #[inline(never)]
    pub(crate) fn interpolate(&mut self, parts: &[StrPart], env: &Rc<Env>) -> EvalResult<String> {
        let mut out = String::new();
        self.interpolate_into(parts, env, &mut out)?;
        Ok(out)
    }

    /// A string literal with interpolations, built in the evaluator's
    /// scratch buffer and copied once into the shared string: building a
    /// `String` of its own and converting it would allocate and free that
    /// buffer for every string made.
    #[inline(never)]
    fn interpolate_str(&mut self, parts: &[StrPart], env: &Rc<Env>) -> EvalResult<NixString> {
        // Taken, not borrowed: an interpolation inside this one (a string
        // built by a function called here) finds it empty and uses its own.
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let r = self.interpolate_into(parts, env, &mut out).map(|()| NixString::from(out.as_str()));
        if out.capacity() <= SCRATCH_KEPT {
            self.scratch = out;
        }
        r
    }

    fn interpolate_into(&mut self, parts: &[StrPart], env: &Rc<Env>, out: &mut String) -> EvalResult<()> {
        // Room for the literal parts and a short value per interpolation:
        // most strings are then built without growing.
        let room = parts.iter().map(|p| if let StrPart::Lit(s) = p { s.len() } else { 16 }).sum();
        out.reserve(room);
        for part in parts {
            match part {
                StrPart::Lit(s) => out.push_str(s),
                StrPart::Interp(e, span) => {
                    let v = self.eval(e, env)?;
                    self.coerce_to_string(&v, CoerceMode::Interpolation, out)
                        .map_err(|e| e.at_if_unset(Some(*span)))?;
                }
                StrPart::ToString(arg, span) => {
                    // What the call `toString arg` would do, errors placed at
                    // the call as `call_builtin` places them; its result, a
                    // string, would then be appended as it is.
                    let v = self.operand(arg, env).map_err(|e| e.at_if_unset(Some(*span)))?;
                    if let &Value::Int(i) = &v {
                        // The usual case, `${toString n}`, written here; an
                        // integer owns nothing, so nothing is dropped.
                        std::mem::forget(v);
                        push_bounded(out, format_int(i, &mut [0; 20])).map_err(|e| e.at_if_unset(Some(*span)))?;
                        continue;
                    }
                    self.coerce_to_string(&v, CoerceMode::ToString, out).map_err(|e| e.at_if_unset(Some(*span)))?;
                }
            }
        }
        Ok(())
    }

    /// String coercion as Nix does it: interpolation accepts strings, paths
    /// and sets with `__toString`/`outPath`; `toString` also numbers, Booleans,
    /// null and lists. A value that coerces through itself (`let x = [ x ];
    /// in toString x`) is infinite recursion; the result is bounded by
    /// [`MAX_STRING`].
    #[inline(never)]
    pub fn coerce_to_string(&mut self, v: &Value, mode: CoerceMode, out: &mut String) -> EvalResult<()> {
        match v {
            Value::String(s) => push_bounded(out, s),
            Value::Path(p) => push_bounded(out, p),
            // Without setting up a walk (which only containers need).
            Value::Int(i) if mode == CoerceMode::ToString => {
                out.push_str(format_int(*i, &mut [0; 20]));
                Ok(())
            }
            _ => self.coerce_in(v, mode, out, &mut Walk::watching_from(WATCH_DEPTH)),
        }
    }

    fn coerce_in(&mut self, v: &Value, mode: CoerceMode, out: &mut String, walk: &mut Walk) -> EvalResult<()> {
        match v {
            Value::String(s) => push_bounded(out, s)?,
            Value::Path(p) => push_bounded(out, p)?,
            Value::Attrs(a) => {
                let key = (Rc::as_ptr(a) as usize, 0);
                if let Some(f) = a.get("__toString") {
                    let f = self.force(&f.clone())?;
                    let r = self.apply(f, Thunk::value(v.clone()), None)?;
                    return self.walk_into(walk, key, |ev, walk| ev.coerce_in(&r, mode, out, walk));
                }
                if let Some(p) = a.get("outPath") {
                    let p = self.force(&p.clone())?;
                    return self.walk_into(walk, key, |ev, walk| ev.coerce_in(&p, mode, out, walk));
                }
                return err(ErrorKind::NotCoercible, "cannot coerce a set to a string");
            }
            _ if mode == CoerceMode::Interpolation => {
                return err(ErrorKind::NotCoercible, format!("cannot coerce {} to a string", v.type_article()));
            }
            Value::Int(i) => out.push_str(format_int(*i, &mut [0; 20])),
            Value::Float(f) => out.push_str(&builtins::float_to_string(*f)),
            Value::Bool(true) => out.push('1'),
            Value::Bool(false) | Value::Null => {}
            Value::List(items) => {
                // As Nix: a space after every element but the last, except
                // after an empty list.
                self.walk_into(walk, (items.as_ptr() as *const u8 as usize, 0), |ev, walk| {
                    for (i, t) in items.iter().enumerate() {
                        let item = ev.force(t)?;
                        ev.coerce_in(&item, mode, out, walk)?;
                        if i + 1 < items.len() && !matches!(item, Value::List(ref l) if l.is_empty()) {
                            push_bounded(out, " ")?;
                        }
                    }
                    Ok(())
                })?;
            }
            Value::Lambda(_) | Value::Builtin(_) => {
                return err(ErrorKind::NotCoercible, "cannot coerce a function to a string")
            }
        }
        Ok(())
    }

    #[inline(never)]
    fn build_attrs(&mut self, def: &Rc<AttrsDef>, env: &Rc<Env>) -> EvalResult<Value> {
        let env = match &def.frame {
            Some(frame) if def.overrides.is_some() => Self::fill_frame_lazily(frame, env),
            Some(frame) => self.fill_frame(frame, env),
            None => env.clone(),
        };
        let extra = match def.overrides {
            Some(slot) => self.apply_overrides(def, &env, slot)?,
            None => Vec::new(),
        };
        let statics: Vec<(NixString, Thunk)> =
            def.statics.iter().map(|s| (s.name.clone(), self.thunk(&s.value, &env))).collect();
        if def.dynamics.is_empty() && extra.is_empty() {
            return Ok(Value::attrs(Attrs::from_sorted(statics).with_origin(def.clone())));
        }
        let mut entries = statics;
        entries.extend(extra);
        for d in &def.dynamics {
            let key = match self.eval(&d.key, &env)? {
                Value::Null => continue,
                Value::String(s) => s,
                v => {
                    return type_err(format!("an attribute name is {}, but a string was expected", v.type_article()))
                        .map_err(|e| e.at(d.span))
                }
            };
            if entries.iter().any(|(k, _)| *k == key) {
                return err(ErrorKind::DuplicateAttribute, format!("dynamic attribute '{key}' is already defined"))
                    .map_err(|e| e.at(d.span));
            }
            entries.push((key, self.thunk(&d.value, &env)));
        }
        Ok(Value::attrs(Attrs::from_unsorted(entries).with_origin(def.clone())))
    }

    /// A `rec` set's legacy `__overrides` (in frame slot `slot`): each of
    /// its attributes replaces the set's own of that name in the set's
    /// scope, so the other attributes see it, or else joins the set; the
    /// ones that join are returned. Nix keeps this for old code that
    /// overrode recursive attributes before `//` and fixed points.
    #[cold]
    #[inline(never)]
    fn apply_overrides(&mut self, def: &AttrsDef, env: &Rc<Env>, slot: u32) -> EvalResult<Vec<(NixString, Thunk)>> {
        let overrides = match self.force(&env.lookup(0, slot)) {
            Ok(Value::Attrs(a)) => a,
            Ok(v) => {
                return type_err(format!("the value of `__overrides` is {}, but a set was expected", v.type_article()))
            }
            Err(e) => return Err(e.context("while evaluating the `__overrides` attribute", None)),
        };
        let mut extra = Vec::new();
        for (name, t) in overrides.iter() {
            let own = def.statics.binary_search_by(|s| s.name.as_ref().cmp(name)).ok().map(|i| &*def.statics[i].value);
            match own {
                Some(Expr::Local { depth: 0, index, .. }) => env.set(*index as usize, t.clone()),
                _ => extra.push((name.clone(), t.clone())),
            }
        }
        Ok(extra)
    }

    pub(crate) fn attr_name(&mut self, key: &AttrKey, env: &Rc<Env>) -> EvalResult<NixString> {
        match key {
            AttrKey::Static(s) => Ok(s.clone()),
            AttrKey::Dynamic(e, span) => match self.eval(e, env)? {
                Value::String(s) => Ok(s),
                v => type_err(format!("an attribute name is {}, but a string was expected", v.type_article()))
                    .map_err(|e| e.at(*span)),
            },
        }
    }

    /// An attribute name in a select or `?`: a static one without a clone.
    fn key_name<'k>(&mut self, key: &'k AttrKey, env: &Rc<Env>) -> EvalResult<Cow<'k, NixString>> {
        match key {
            AttrKey::Static(s) => Ok(Cow::Borrowed(s)),
            AttrKey::Dynamic(..) => self.attr_name(key, env).map(Cow::Owned),
        }
    }

    #[inline(never)]
    fn select(
        &mut self,
        expr: &ExprRef,
        path: &[AttrKey],
        default: Option<&ExprRef>,
        span: Span,
        env: &Rc<Env>,
    ) -> EvalResult<Value> {
        let mut v = self.operand(expr, env)?;
        for key in path {
            let name = self.key_name(key, env)?;
            let next = match &v {
                Value::Attrs(a) => match a.get(&name) {
                    Some(t) => Some(
                        self.force(t)
                            .map_err(|e| e.context(format!("while evaluating the attribute '{name}'"), Some(span)))?,
                    ),
                    None => None,
                },
                _ if default.is_some() => None,
                other => {
                    return Err(EvalError::new(
                        ErrorKind::Type,
                        format!("cannot select attribute '{name}' from {}, a set was expected", other.type_article()),
                    )
                    .at(span))
                }
            };
            match next {
                Some(n) => v = n,
                None => match default {
                    // `x._type or null`: a constant default without a step.
                    Some(d) => match &**d {
                        Expr::Const(c) => return Ok(c.clone()),
                        _ => return self.eval(d, env),
                    },
                    None => {
                        let Value::Attrs(a) = &v else { unreachable!("checked above") };
                        return Err(missing_attr(&name, a, span));
                    }
                },
            }
        }
        Ok(v)
    }

    #[inline(never)]
    fn has_attr(&mut self, expr: &ExprRef, path: &[AttrKey], env: &Rc<Env>) -> EvalResult<Value> {
        let mut v = self.eval(expr, env)?;
        for (i, key) in path.iter().enumerate() {
            let name = self.key_name(key, env)?;
            let next = match &v {
                Value::Attrs(a) => match a.get(&name) {
                    // The last attribute's value is never forced.
                    Some(_) if i + 1 == path.len() => return Ok(Value::Bool(true)),
                    Some(t) => self.force(t)?,
                    None => return Ok(Value::Bool(false)),
                },
                _ => return Ok(Value::Bool(false)),
            };
            v = next;
        }
        Ok(Value::Bool(true))
    }

    #[inline]
    pub fn apply(&mut self, f: Value, arg: Thunk, span: Option<Span>) -> EvalResult<Value> {
        match f {
            Value::Lambda(c) => self.call_lambda(&c, arg, span),
            other => self.apply_other(other, arg, span),
        }
    }

    /// Builtins, partial applications and `__functor` sets.
    #[inline(never)]
    fn apply_other(&mut self, f: Value, arg: Thunk, span: Option<Span>) -> EvalResult<Value> {
        match f {
            Value::Lambda(c) => self.call_lambda(&c, arg, span),
            Value::Builtin(pb) => {
                if pb.args.is_empty() && builtins::arity(pb.id) == 1 {
                    return self.call_builtin(pb.id, std::slice::from_ref(&arg), span);
                }
                let mut args = pb.args.clone();
                args.push(arg);
                if args.len() == builtins::arity(pb.id) {
                    self.call_builtin(pb.id, &args, span)
                } else {
                    Ok(Value::Builtin(Rc::new(PartialBuiltin { id: pb.id, args })))
                }
            }
            Value::Attrs(ref a) if a.contains("__functor") => {
                let functor = self.force(&a.get("__functor").expect("checked").clone())?;
                let g = self.apply(functor, Thunk::value(f.clone()), span)?;
                self.apply(g, arg, span)
            }
            other => Err(EvalError::new(
                ErrorKind::Type,
                format!("attempt to call something which is not a function but {}", other.type_article()),
            )
            .at_if_unset(span)),
        }
    }

    /// `f a b`; when `f` is `a: b: body`, without building the closure
    /// `f a` in between.
    pub fn apply2(&mut self, f: &Value, a: Thunk, b: Thunk) -> EvalResult<Value> {
        if let Some((c, inner)) = crate::repeat::curried(f) {
            let env = Env::with_one(&Env::with_one(&c.env, a), b);
            return self.eval(&inner.body, &env).map_err(|e| call_context(e, inner, None));
        }
        let g = self.apply(f.clone(), a, None)?;
        self.apply(g, b, None)
    }

    pub fn apply_all(&mut self, f: Value, args: &[Thunk], span: Option<Span>) -> EvalResult<Value> {
        let mut v = f;
        for a in args {
            v = self.apply(v, a.clone(), span)?;
        }
        Ok(v)
    }

    fn call_builtin(&mut self, id: BuiltinId, args: &[Thunk], span: Option<Span>) -> EvalResult<Value> {
        builtins::call(self, id, args).map_err(|e| e.at_if_unset(span))
    }

    fn call_lambda(&mut self, c: &Rc<Closure>, arg: Thunk, span: Option<Span>) -> EvalResult<Value> {
        let env = self.bind_args(&c.lambda, &c.env, arg, span)?;
        self.eval(&c.lambda.body, &env).map_err(|e| call_context(e, &c.lambda, span))
    }

    /// The frame of a call of `lambda` closed over `scope`: the argument
    /// bound to the parameter or pattern.
    #[inline]
    fn bind_args(&mut self, lambda: &Lambda, scope: &Rc<Env>, arg: Thunk, span: Option<Span>) -> EvalResult<Rc<Env>> {
        match &lambda.param {
            Param::Ident => Ok(Env::with_one(scope, arg)),
            Param::Pattern(p) => self.bind_pattern(lambda, scope, p, arg, span),
        }
    }

    #[inline(never)]
    fn bind_pattern(
        &mut self,
        lambda: &Lambda,
        scope: &Rc<Env>,
        p: &Pattern,
        arg: Thunk,
        span: Option<Span>,
    ) -> EvalResult<Rc<Env>> {
        // Only error messages name the function: built on demand, not per call.
        let fname = || lambda.name.as_deref().map_or("anonymous function".to_string(), |n| format!("function '{n}'"));
        let v = self.force(&arg)?;
        let Value::Attrs(attrs) = &v else {
            return Err(EvalError::new(
                ErrorKind::Type,
                format!("{} expects a set as its argument, but got {}", fname(), v.type_article()),
            )
            .at_if_unset(span));
        };
        let env = Env::child(scope, p.formals.len() + p.bind as usize);
        let mut found = 0;
        for formal in &p.formals {
            match attrs.get(&formal.name) {
                Some(t) => {
                    found += 1;
                    env.push(t.clone())
                }
                None => match &formal.default {
                    Some(d) => env.push(self.frame_thunk(d, &env)),
                    None => {
                        let mut e = EvalError::new(
                            ErrorKind::MissingArgument,
                            format!("{} called without required argument '{}'", fname(), formal.name),
                        )
                        .at_if_unset(span)
                        .label("called here")
                        .note("the argument is declared here", formal.span);
                        // A name the caller passed that no formal takes is
                        // most likely this one misspelt.
                        if let Some(k) = did_you_mean(&formal.name, unexpected(attrs, p).map(|k| k.as_ref())) {
                            e = e.help(format!("the argument set has '{k}': did you mean '{}'?", formal.name));
                        }
                        return Err(e);
                    }
                },
            }
        }
        // Every name of the argument matched a formal: none is unexpected.
        if !p.ellipsis && found != attrs.len() {
            if let Some(key) = unexpected(attrs, p).next() {
                let mut e = EvalError::new(
                    ErrorKind::UnexpectedArgument,
                    format!("{} called with unexpected argument '{key}'", fname()),
                )
                .at_if_unset(span)
                .label("called here");
                if let Some(s) = did_you_mean(key, p.formals.iter().map(|f| f.name.as_ref())) {
                    e = e.help(format!("did you mean '{s}'?"));
                }
                return Err(e.note("the function is defined here", lambda.span));
            }
        }
        if p.bind {
            env.push(Thunk::value(v.clone()));
        }
        Ok(env)
    }

    /// Operators on two evaluated operands, integers inline. Kept small:
    /// deep recursion like `1 + f (n - 1)` has this frame on every level.
    #[inline(never)]
    fn binary(&mut self, op: BinOp, lhs: &ExprRef, rhs: &ExprRef, span: Span, env: &Rc<Env>) -> EvalResult<Value> {
        if matches!(op, BinOp::And | BinOp::Or | BinOp::Implies | BinOp::PipeRight | BinOp::PipeLeft) {
            return self.binary_lazy(op, lhs, rhs, span, env);
        }
        // Integer leaves (a constant, a variable already evaluated: `n == 0`,
        // `1 + f (n - 1)`) are read in place, without a call of `operand`;
        // reading them first changes no order, as reading forces nothing.
        let a = match int_leaf(lhs, env) {
            Some(x) => {
                if let Some(y) = int_leaf(rhs, env) {
                    return self.int_binary(op, x, y, span);
                }
                Value::Int(x)
            }
            None => self.operand(lhs, env)?,
        };
        let b = self.operand(rhs, env)?;
        if let (&Value::Int(x), &Value::Int(y)) = (&a, &b) {
            // Integers own nothing; forgetting them skips the two
            // out-of-line calls of the drop glue the compiler leaves even
            // for a match by value.
            std::mem::forget(a);
            std::mem::forget(b);
            return self.int_binary(op, x, y, span);
        }
        if let (Value::String(x), Value::String(y), BinOp::Eq | BinOp::NotEq) = (&a, &b, op) {
            return Ok(Value::Bool((x == y) == (op == BinOp::Eq)));
        }
        self.binary_values(op, a, b).map_err(|e| e.at_if_unset(Some(span)))
    }

    /// [`Self::binary`] of two integers: the common operators inline, each
    /// returning its value directly (an `Option<Value>` in between was
    /// written and read back a byte at a time).
    #[inline(always)]
    fn int_binary(&mut self, op: BinOp, x: i64, y: i64, span: Span) -> EvalResult<Value> {
        match op {
            BinOp::Add => {
                if let Some(r) = x.checked_add(y) {
                    return Ok(Value::Int(r));
                }
            }
            BinOp::Sub => {
                if let Some(r) = x.checked_sub(y) {
                    return Ok(Value::Int(r));
                }
            }
            BinOp::Eq => return Ok(Value::Bool(x == y)),
            BinOp::NotEq => return Ok(Value::Bool(x != y)),
            BinOp::Less => return Ok(Value::Bool(x < y)),
            BinOp::LessEq => return Ok(Value::Bool(x <= y)),
            BinOp::Greater => return Ok(Value::Bool(x > y)),
            BinOp::GreaterEq => return Ok(Value::Bool(x >= y)),
            _ => {}
        }
        self.binary_values(op, Value::Int(x), Value::Int(y)).map_err(|e| e.at_if_unset(Some(span)))
    }

    /// The short-circuit operators and pipes, which do not evaluate both
    /// operands first.
    #[inline(never)]
    fn binary_lazy(&mut self, op: BinOp, lhs: &ExprRef, rhs: &ExprRef, span: Span, env: &Rc<Env>) -> EvalResult<Value> {
        match op {
            BinOp::And => {
                if !self.eval_bool(lhs, env, span, "the left operand of '&&'")? {
                    return Ok(Value::Bool(false));
                }
                Ok(Value::Bool(self.eval_bool(rhs, env, span, "the right operand of '&&'")?))
            }
            BinOp::Or => {
                if self.eval_bool(lhs, env, span, "the left operand of '||'")? {
                    return Ok(Value::Bool(true));
                }
                Ok(Value::Bool(self.eval_bool(rhs, env, span, "the right operand of '||'")?))
            }
            BinOp::Implies => {
                if !self.eval_bool(lhs, env, span, "the left operand of '->'")? {
                    return Ok(Value::Bool(true));
                }
                Ok(Value::Bool(self.eval_bool(rhs, env, span, "the right operand of '->'")?))
            }
            BinOp::PipeRight => {
                let f = self.eval(rhs, env)?;
                let x = self.thunk(lhs, env);
                self.apply(f, x, Some(span))
            }
            BinOp::PipeLeft => {
                let f = self.eval(lhs, env)?;
                let x = self.thunk(rhs, env);
                self.apply(f, x, Some(span))
            }
            _ => unreachable!("strict operators are evaluated in binary()"),
        }
    }

    #[inline(never)]
    pub fn binary_values(&mut self, op: BinOp, a: Value, b: Value) -> EvalResult<Value> {
        use crate::arith::{arith, compare};
        match op {
            BinOp::Add => match (&a, &b) {
                (Value::String(_), Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Null | Value::List(_))
                | (Value::Int(_) | Value::Float(_), Value::String(_)) => Err(EvalError::new(
                    ErrorKind::Type,
                    format!("cannot add {} and {}", a.type_article(), b.type_article()),
                )
                .help("convert with toString, or make both numbers")),
                (Value::String(x), Value::String(y)) => {
                    self.reserve_string(x.len().saturating_add(y.len()))?;
                    Ok(Value::String(concat_strings(x, y)))
                }
                (Value::String(x), _) => {
                    let mut s = x.to_string();
                    self.coerce_to_string(&b, CoerceMode::Interpolation, &mut s)?;
                    Ok(Value::string(s))
                }
                (Value::Path(x), Value::String(y) | Value::Path(y)) => {
                    self.reserve_string(x.len().saturating_add(y.len()))?;
                    Ok(Value::Path(path::normalize(&format!("{x}{y}")).into()))
                }
                (Value::Path(x), Value::Attrs(_)) => {
                    let mut s = x.to_string();
                    self.coerce_to_string(&b, CoerceMode::Interpolation, &mut s)?;
                    Ok(Value::Path(path::normalize(&s).into()))
                }
                _ => arith(op, &a, &b),
            },
            BinOp::Sub | BinOp::Mul | BinOp::Div => arith(op, &a, &b),
            BinOp::Concat => match (&a, &b) {
                // A side that is empty leaves the other as it is; else the
                // elements go straight into the new list (one allocation).
                (Value::List(x), Value::List(y)) if y.is_empty() => Ok(Value::List(x.clone())),
                (Value::List(x), Value::List(y)) if x.is_empty() => Ok(Value::List(y.clone())),
                (Value::List(x), Value::List(y)) => {
                    self.reserve_list(x.len() + y.len())?;
                    Ok(Value::List(x.iter().chain(y.iter()).cloned().collect()))
                }
                _ => type_err(format!(
                    "cannot concatenate {} and {}: '++' needs two lists",
                    a.type_article(),
                    b.type_article()
                )),
            },
            BinOp::Update => match (a, b) {
                (Value::Attrs(mut x), Value::Attrs(y)) => {
                    if y.is_empty() {
                        return Ok(Value::Attrs(x));
                    }
                    if x.is_empty() {
                        return Ok(Value::Attrs(y));
                    }
                    // A set only this value holds (a fresh literal, a call's
                    // result) can take a few names in place, copying nothing.
                    if y.len() <= 8 {
                        if let Some(m) = Rc::get_mut(&mut x) {
                            m.update_in_place(&y);
                            return Ok(Value::Attrs(x));
                        }
                    }
                    Ok(Value::attrs(x.update(&y)))
                }
                (a, b) => type_err(format!(
                    "cannot update {} with {}: '//' needs two sets",
                    a.type_article(),
                    b.type_article()
                )),
            },
            BinOp::Eq => Ok(Value::Bool(self.equal(&a, &b)?)),
            BinOp::NotEq => Ok(Value::Bool(!self.equal(&a, &b)?)),
            BinOp::Less => Ok(Value::Bool(compare(self, &a, &b)? == std::cmp::Ordering::Less)),
            BinOp::LessEq => Ok(Value::Bool(compare(self, &a, &b)? != std::cmp::Ordering::Greater)),
            BinOp::Greater => Ok(Value::Bool(compare(self, &a, &b)? == std::cmp::Ordering::Greater)),
            BinOp::GreaterEq => Ok(Value::Bool(compare(self, &a, &b)? != std::cmp::Ordering::Less)),
            BinOp::And | BinOp::Or | BinOp::Implies | BinOp::PipeLeft | BinOp::PipeRight => {
                unreachable!("short-circuit operators are evaluated in binary()")
            }
        }
    }

    /// A set with `type = "derivation"`; such sets compare by `outPath`.
    fn is_derivation(&mut self, a: &Attrs) -> EvalResult<bool> {
        match a.get("type").cloned() {
            Some(t) => Ok(matches!(self.force(&t)?, Value::String(s) if &*s == "derivation")),
            None => Ok(false),
        }
    }

    /// Deep equality with Nix's rules: numbers compare across int/float,
    /// functions are never equal, elements sharing one thunk are equal.
    /// Two distinct cyclic values (`let x = { a = x; }; y = { a = y; }; in
    /// x == y`) are infinite recursion, where Nix overflows its stack.
    pub fn equal(&mut self, a: &Value, b: &Value) -> EvalResult<bool> {
        self.equal_in(a, b, &mut Walk::watching_from(WATCH_DEPTH))
    }

    fn equal_in(&mut self, a: &Value, b: &Value, walk: &mut Walk) -> EvalResult<bool> {
        Ok(match (a, b) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Int(x), Value::Int(y)) => x == y,
            (Value::Float(x), Value::Float(y)) => x == y,
            (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => (*x as f64) == *y,
            (Value::String(x), Value::String(y)) => x == y,
            (Value::Path(x), Value::Path(y)) => x == y,
            (Value::List(x), Value::List(y)) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                let key = (x.as_ptr() as usize, y.as_ptr() as usize);
                self.walk_into(walk, key, |ev, walk| {
                    for (p, q) in x.iter().zip(y.iter()) {
                        if !ev.thunks_equal(p, q, walk)? {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                })?
            }
            (Value::Attrs(x), Value::Attrs(y)) => {
                if Rc::ptr_eq(x, y) {
                    return Ok(true);
                }
                if self.is_derivation(x)? && self.is_derivation(y)? {
                    if let (Some(p), Some(q)) = (x.get("outPath").cloned(), y.get("outPath").cloned()) {
                        let key = (Rc::as_ptr(x) as usize, Rc::as_ptr(y) as usize);
                        return self.walk_into(walk, key, |ev, walk| ev.thunks_equal(&p, &q, walk));
                    }
                }
                if x.len() != y.len() || !x.keys().zip(y.keys()).all(|(p, q)| p == q) {
                    return Ok(false);
                }
                let key = (Rc::as_ptr(x) as usize, Rc::as_ptr(y) as usize);
                self.walk_into(walk, key, |ev, walk| {
                    for ((_, p), (_, q)) in x.iter().zip(y.iter()) {
                        if !ev.thunks_equal(p, q, walk)? {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                })?
            }
            _ => false,
        })
    }

    /// Inside containers Nix first compares by identity, so one function
    /// stored twice is equal to itself there.
    fn thunks_equal(&mut self, p: &Thunk, q: &Thunk, walk: &mut Walk) -> EvalResult<bool> {
        if p.ptr_eq(q) {
            return Ok(true);
        }
        if let (Some(Value::Lambda(f)), Some(Value::Lambda(g))) = (p.peek(), q.peek()) {
            // the same closure, or one function of a frame read twice (env.rs)
            if Rc::ptr_eq(&f, &g) || (Rc::ptr_eq(&f.lambda, &g.lambda) && Rc::ptr_eq(&f.env, &g.env)) {
                return Ok(true);
            }
        }
        let (a, b) = (self.force(p)?, self.force(q)?);
        self.equal_in(&a, &b, walk)
    }

    /// One level down a walk over a value (comparing, converting, printing,
    /// forcing): `key` names the container (or pair of containers) entered.
    /// A key already on the walk's path is a cycle, reported as infinite
    /// recursion; the depth counts towards [`MAX_DEPTH`] like evaluation
    /// and the stack grows on the heap.
    pub(crate) fn walk_into<R>(
        &mut self,
        walk: &mut Walk,
        key: (usize, usize),
        f: impl FnOnce(&mut Evaluator, &mut Walk) -> EvalResult<R>,
    ) -> EvalResult<R> {
        let watched = walk.enter(key)?;
        self.depth += 1;
        let r = if self.depth > MAX_DEPTH {
            Err(value_too_deep())
        } else {
            stacker::maybe_grow(256 * 1024, 16 * 1024 * 1024, || f(self, walk))
        };
        self.depth -= 1;
        walk.leave(key, watched);
        r
    }

    /// Forces a value and everything inside it (for `--strict`, `deepSeq`,
    /// JSON output); shared structures are visited once, so a cyclic value
    /// is forced without end neither here nor in Nix.
    pub fn deep_force(&mut self, v: &Value) -> EvalResult<()> {
        let mut seen = std::collections::HashSet::new();
        self.deep_force_inner(v, &mut seen, &mut Walk::watching_from(usize::MAX))
    }

    fn deep_force_inner(
        &mut self,
        v: &Value,
        seen: &mut std::collections::HashSet<usize>,
        walk: &mut Walk,
    ) -> EvalResult<()> {
        match v {
            Value::List(items) => {
                let key = items.as_ptr() as *const u8 as usize;
                if !seen.insert(key) {
                    return Ok(());
                }
                self.walk_into(walk, (key, 0), |ev, walk| {
                    for t in items.iter() {
                        let x = ev.force(t)?;
                        ev.deep_force_inner(&x, seen, walk)?;
                    }
                    Ok(())
                })?;
            }
            Value::Attrs(a) => {
                let key = Rc::as_ptr(a) as usize;
                if !seen.insert(key) {
                    return Ok(());
                }
                self.walk_into(walk, (key, 0), |ev, walk| {
                    for (name, t) in a.iter() {
                        let in_attr =
                            |e: Box<EvalError>| e.context(format!("while evaluating the attribute '{name}'"), None);
                        let x = ev.force(t).map_err(in_attr)?;
                        ev.deep_force_inner(&x, seen, walk).map_err(in_attr)?;
                    }
                    Ok(())
                })?;
            }
            _ => {}
        }
        Ok(())
    }

    pub fn trace_message(&mut self, msg: &str) {
        (self.trace)(msg)
    }
}

/// What [`Evaluator::apply_spine`] got to.
enum Spine {
    Done(Value),
    Func(Value),
}

/// What one evaluation step produced: a value, or an expression in tail
/// position to continue with in the same frame.
enum Step {
    Value(Value),
    Tail(ExprRef, Rc<Env>),
    /// The same, in the same environment (`if`, `assert`).
    Same(ExprRef),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CoerceMode {
    Interpolation,
    ToString,
}

/// The names of an argument set that no formal of `p` takes.
fn unexpected<'a>(attrs: &'a Attrs, p: &'a Pattern) -> impl Iterator<Item = &'a NixString> {
    attrs.keys().filter(|k| !p.formals.iter().any(|f| f.name == **k))
}

/// `x op y` on integers where that cannot fail: `None` for an overflow, a
/// division by zero or an operator [`Evaluator::cheap`] leaves alone, all
/// of which are left to the evaluation proper (and its error).
#[inline(always)]
fn cheap_int_op(op: BinOp, x: i64, y: i64) -> Option<Value> {
    Some(match op {
        BinOp::Add => Value::Int(x.checked_add(y)?),
        BinOp::Sub => Value::Int(x.checked_sub(y)?),
        BinOp::Mul => Value::Int(x.checked_mul(y)?),
        BinOp::Div if y != 0 => Value::Int(x.checked_div(y)?),
        BinOp::Eq => Value::Bool(x == y),
        BinOp::NotEq => Value::Bool(x != y),
        BinOp::Less => Value::Bool(x < y),
        BinOp::LessEq => Value::Bool(x <= y),
        BinOp::Greater => Value::Bool(x > y),
        BinOp::GreaterEq => Value::Bool(x >= y),
        _ => return None,
    })
}

/// The integer an operand stands for if that is known without evaluating
/// anything: an integer constant, or a variable whose value is one.
#[inline(always)]
fn int_leaf(e: &Expr, env: &Rc<Env>) -> Option<i64> {
    let int = |v: &Value| match v {
        Value::Int(i) => Some(*i),
        _ => None,
    };
    match e {
        Expr::Const(v) => int(v),
        Expr::Local { depth, index, .. } => env.thunk_at(*depth, *index)?.inspect(int),
        _ => None,
    }
}

/// The id of `v` if it is a builtin taking `arity` arguments, none given.
#[inline(always)]
fn builtin_taking(v: &Value, arity: usize) -> Option<BuiltinId> {
    match v {
        Value::Builtin(pb) if pb.args.is_empty() && builtins::arity(pb.id) == arity => Some(pb.id),
        _ => None,
    }
}

#[cold]
pub(crate) fn call_context(e: Box<EvalError>, lambda: &Lambda, span: Option<Span>) -> Box<EvalError> {
    match &lambda.name {
        Some(name) => e.context(format!("while calling '{name}'"), span),
        None => e.context("while calling a function", span),
    }
}

#[cold]
fn not_bool(what: &str, v: &Value, span: Span) -> Box<EvalError> {
    EvalError::new(ErrorKind::Type, format!("{what} is {}, but a Boolean was expected", v.type_article())).at(span)
}

#[cold]
fn infinite_recursion(span: Option<Span>) -> Box<EvalError> {
    EvalError::new(ErrorKind::InfiniteRecursion, "infinite recursion encountered")
        .at_if_unset(span)
        .label("this value depends on itself")
}

#[cold]
fn value_too_deep() -> Box<EvalError> {
    EvalError::new(ErrorKind::TooDeep, format!("the value is nested more than {MAX_DEPTH} levels deep"))
        .help("a value this deep is usually built without end, by a function that always nests once more")
}

/// Nesting of a walk over a value past which it watches the containers on
/// its path: a cyclic value is then caught within one turn of its cycle,
/// while walks of ordinary values never pay for watching.
pub(crate) const WATCH_DEPTH: usize = 64;

/// The state of one walk over a value: its depth, and past the depth it
/// watches from, the keys of the containers on its path.
pub(crate) struct Walk {
    depth: usize,
    watch_from: usize,
    path: std::collections::HashSet<(usize, usize)>,
}

impl Walk {
    pub(crate) fn watching_from(watch_from: usize) -> Walk {
        Walk { depth: 0, watch_from, path: std::collections::HashSet::new() }
    }

    /// Enters `key`: whether it is watched, or an error if it is on the
    /// path already.
    fn enter(&mut self, key: (usize, usize)) -> EvalResult<bool> {
        self.depth += 1;
        if self.depth <= self.watch_from {
            return Ok(false);
        }
        if self.path.insert(key) {
            Ok(true)
        } else {
            self.depth -= 1;
            Err(cyclic())
        }
    }

    fn leave(&mut self, key: (usize, usize), watched: bool) {
        self.depth -= 1;
        if watched {
            self.path.remove(&key);
        }
    }
}

/// A walk met a value inside itself.
#[cold]
pub(crate) fn cyclic() -> Box<EvalError> {
    EvalError::new(ErrorKind::InfiniteRecursion, "infinite recursion encountered")
        .label("this value contains itself")
        .help("the value is cyclic (it contains itself), so this never ends")
}

#[cold]
fn too_deep(expr: &Expr) -> Box<EvalError> {
    EvalError::new(ErrorKind::TooDeep, format!("evaluation is nested more than {MAX_DEPTH} levels deep"))
        .at_if_unset(expr_span(expr))
        .help("this is usually unbounded recursion; otherwise restructure it, e.g. with builtins.foldl'")
}

pub(crate) fn missing_attr(name: &str, a: &Attrs, span: Span) -> Box<EvalError> {
    let mut e = EvalError::new(ErrorKind::MissingAttribute, format!("attribute '{name}' missing"))
        .at(span)
        .label("selected here");
    if let Some(s) = did_you_mean(name, a.keys().map(|k| k.as_ref())) {
        e = e.help(format!("did you mean '{s}'?"));
    }
    e
}

pub fn expr_span(e: &Expr) -> Option<Span> {
    match e {
        Expr::WithVar { span, .. }
        | Expr::Str(_, span)
        | Expr::Path(_, span)
        | Expr::With { span, .. }
        | Expr::Apply { span, .. }
        | Expr::CallBuiltin { span, .. }
        | Expr::If { span, .. }
        | Expr::Assert { span, .. }
        | Expr::Select { span, .. }
        | Expr::HasAttr { span, .. }
        | Expr::Binary { span, .. }
        | Expr::Not(_, span)
        | Expr::Negate(_, span)
        | Expr::CurPos(span) => Some(*span),
        Expr::Lambda(l) => Some(l.span),
        Expr::Let { body, .. } => expr_span(body),
        Expr::Attrs(d) => d.statics.first().map(|s| s.span),
        Expr::Local { span, .. } => Some(*span),
        Expr::Const(_) | Expr::List(_) => None,
    }
}

#[cfg(test)]
mod tests {
    /// `format_int` writes what `Display` writes, at the edges of the
    /// two-digit steps and of the type.
    #[test]
    fn format_int_matches_display() {
        let mut cases = vec![0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, i64::MAX, i64::MIN, i64::MIN + 1];
        let mut p = 1i64;
        while let Some(q) = p.checked_mul(10) {
            cases.extend([p - 1, p, p + 1, q - 1]);
            p = q;
        }
        let negated: Vec<i64> = cases.iter().map(|i| i.wrapping_neg()).collect();
        cases.extend(negated);
        for i in cases {
            assert_eq!(super::format_int(i, &mut [0; 20]), i.to_string(), "{i}");
        }
    }
}

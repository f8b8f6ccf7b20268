//! Lowering: rnix syntax trees become the resolved [`Expr`] tree. This is
//! where variables are bound to frame slots, attribute paths are merged into
//! nested sets, duplicate attributes and undefined variables are reported,
//! and literal paths are made absolute relative to their file.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use rnix::ast::{self, AstToken, HasEntry, InterpolPart};
use rowan::ast::AstNode;

use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::indented;
use crate::ir::*;
use crate::path;
use crate::source::{FileId, Span};
use crate::suggest::did_you_mean;
use crate::thunk::Thunk;
use crate::value::{Attrs, NixString, Value};

enum Scope {
    Frame(HashMap<NixString, u32>),
    With,
}

/// The `with` depths made last, keyed by (scope count, skip, `withs` made).
type WithCache = ((usize, usize, usize), Rc<[u32]>);

pub struct Lowerer<'a> {
    file: FileId,
    /// Directory of the file, for relative path literals.
    dir: String,
    file_name: String,
    globals: &'a HashMap<NixString, Value>,
    scopes: Vec<Scope>,
    /// For each name bound by a frame in `scopes`, the positions of those
    /// frames, innermost last; and the positions of the `with`s. Resolving
    /// a name is then a lookup, not a walk of every enclosing scope (which
    /// made 10000 nested `let`s and many names quadratic).
    bound: HashMap<NixString, Vec<usize>>,
    with_positions: Vec<usize>,
    /// The `with` depths made last for a variable, shared by the variables
    /// of the same scope: (scope count, skip, `withs` made) → depths.
    with_cache: RefCell<Option<WithCache>>,
    /// For each scope in `scopes`, the slots of a `let` bound to a builtin
    /// known when lowering (`inherit (builtins) hasAttr;`): a name that
    /// resolves to one of them stands for the builtin itself, so a call of
    /// it is an [`Expr::CallBuiltin`].
    consts: Vec<Vec<(u32, Value)>>,
}

/// Resolves where a name lives: in a frame, behind `with`s, or nowhere.
enum Resolved {
    Local(u32, u32),
    Global(Value),
    With(Rc<[u32]>),
    Unbound,
}

impl<'a> Lowerer<'a> {
    pub fn new(file: FileId, file_path: &str, file_name: String, globals: &'a HashMap<NixString, Value>) -> Self {
        Lowerer {
            file,
            dir: path::dir_of(file_path),
            file_name,
            globals,
            scopes: Vec::new(),
            bound: HashMap::new(),
            with_positions: Vec::new(),
            with_cache: RefCell::new(None),
            consts: Vec::new(),
        }
    }

    fn span(&self, node: &impl AstNode<Language = rnix::NixLanguage>) -> Span {
        Span::new(self.file, node.syntax().text_range())
    }

    /// The file's expression; `scope` (possibly empty) names the slots of
    /// a frame around it, which `scopedImport` fills.
    pub fn lower_root_in(&mut self, root: &ast::Root, scope: &[NixString]) -> EvalResult<ExprRef> {
        grammar_check(self.file, root)?;
        let Some(e) = root.expr() else {
            return Err(EvalError::new(ErrorKind::Parse, "the file contains no expression"));
        };
        if scope.is_empty() {
            return self.lower(&e, None);
        }
        let names = scope.iter().enumerate().map(|(i, n)| (n.clone(), i as u32)).collect();
        self.push_scope(Scope::Frame(names));
        let r = self.lower(&e, None);
        self.pop_scope();
        r
    }

    fn push_scope(&mut self, scope: Scope) {
        let at = self.scopes.len();
        match &scope {
            Scope::Frame(names) => {
                for name in names.keys() {
                    self.bound.entry(name.clone()).or_default().push(at);
                }
            }
            Scope::With => self.with_positions.push(at),
        }
        self.scopes.push(scope);
        self.consts.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        self.consts.pop();
        match self.scopes.pop() {
            Some(Scope::Frame(names)) => {
                for name in names.keys() {
                    if let Some(at) = self.bound.get_mut(name) {
                        at.pop();
                        if at.is_empty() {
                            self.bound.remove(name);
                        }
                    }
                }
            }
            Some(Scope::With) => {
                self.with_positions.pop();
            }
            None => {}
        }
        // Depths are relative to the innermost scope: made anew from here.
        self.with_cache.replace(None);
    }

    /// Where `name` lives, ignoring the innermost `skip` scopes: the
    /// innermost frame binding it, else a builtin, else the enclosing
    /// `with`s (innermost first), else nowhere.
    fn resolve(&self, name: &str, skip: usize) -> Resolved {
        let top = self.scopes.len();
        let visible = top.saturating_sub(skip);
        if let Some(at) = self.bound.get(name) {
            let i = at.partition_point(|&p| p < visible);
            if i > 0 {
                let pos = at[i - 1];
                let Scope::Frame(names) = &self.scopes[pos] else { unreachable!("bound by a frame") };
                let index = names[name];
                if let Some((_, v)) = self.consts[pos].iter().find(|(i, _)| *i == index) {
                    return Resolved::Global(v.clone());
                }
                return Resolved::Local((top - 1 - pos) as u32, index);
            }
        }
        if let Some(v) = self.globals.get(name) {
            return Resolved::Global(v.clone());
        }
        let n = self.with_positions.partition_point(|&p| p < visible);
        if n == 0 {
            return Resolved::Unbound;
        }
        let key = (top, skip, n);
        if let Some((k, withs)) = &*self.with_cache.borrow() {
            if *k == key {
                return Resolved::With(withs.clone());
            }
        }
        let withs: Rc<[u32]> = self.with_positions[..n].iter().rev().map(|&p| (top - 1 - p) as u32).collect();
        self.with_cache.replace(Some((key, withs.clone())));
        Resolved::With(withs)
    }

    fn var(&self, name: &str, span: Span, skip: usize) -> EvalResult<ExprRef> {
        Ok(Rc::new(match self.resolve(name, skip) {
            Resolved::Local(depth, index) => Expr::Local { depth, index, span },
            Resolved::Global(v) => Expr::Const(v),
            Resolved::With(withs) => Expr::WithVar { name: name.into(), withs, span },
            Resolved::Unbound => {
                let candidates = self.visible_names();
                let mut e = EvalError::new(ErrorKind::UndefinedVariable, format!("undefined variable '{name}'"))
                    .at(span)
                    .label("not defined here");
                if let Some(s) = did_you_mean(name, candidates.iter().map(|s| s.as_ref())) {
                    e = e.help(format!("did you mean '{s}'?"));
                }
                return Err(e);
            }
        }))
    }

    fn visible_names(&self) -> Vec<NixString> {
        let mut names: Vec<NixString> = self
            .scopes
            .iter()
            .filter_map(|s| match s {
                Scope::Frame(n) => Some(n.keys().cloned()),
                Scope::With => None,
            })
            .flatten()
            .collect();
        names.extend(self.globals.keys().filter(|k| !k.starts_with("__")).cloned());
        names
    }

    fn lower(&mut self, e: &ast::Expr, name: Option<&NixString>) -> EvalResult<ExprRef> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.lower_inner(e, name))
    }

    fn lower_inner(&mut self, e: &ast::Expr, name: Option<&NixString>) -> EvalResult<ExprRef> {
        let span = self.span(e);
        Ok(match e {
            ast::Expr::Paren(p) => return self.lower(&child(p.expr(), span)?, name),
            ast::Expr::Root(r) => return self.lower(&child(r.expr(), span)?, name),
            ast::Expr::Literal(lit) => Rc::new(Expr::Const(self.literal(lit, span)?)),
            ast::Expr::Ident(id) => {
                let text = ident_text(id);
                self.var(&text, span, 0)?
            }
            ast::Expr::Str(s) => self.string(s, span)?,
            ast::Expr::PathAbs(_) | ast::Expr::PathRel(_) | ast::Expr::PathHome(_) | ast::Expr::PathSearch(_) => {
                let p: ast::Path = match e {
                    ast::Expr::PathAbs(p) => p.clone().into(),
                    ast::Expr::PathRel(p) => p.clone().into(),
                    ast::Expr::PathHome(p) => p.clone().into(),
                    ast::Expr::PathSearch(p) => p.clone().into(),
                    _ => unreachable!("matched above"),
                };
                self.path(&p, span)?
            }
            ast::Expr::List(l) => {
                let items = l.items().map(|i| self.lower(&i, None)).collect::<EvalResult<Vec<_>>>()?;
                if items.is_empty() {
                    // One shared empty list: `[ ]` is common as a result
                    // (`if c then [ x ] else [ ]`) and then costs nothing.
                    Rc::new(Expr::Const(Value::list(Vec::new())))
                } else {
                    Rc::new(Expr::List(items))
                }
            }
            ast::Expr::AttrSet(set) => self.attr_set(set)?,
            ast::Expr::LetIn(l) => self.let_in(l, span)?,
            ast::Expr::LegacyLet(l) => {
                let def = self.bindings(l, true, span)?;
                let set = Rc::new(Expr::Attrs(Rc::new(def)));
                Rc::new(Expr::Select { expr: set, path: vec![AttrKey::Static("body".into())], default: None, span })
            }
            ast::Expr::With(w) => {
                let namespace = self.lower(&child(w.namespace(), span)?, None)?;
                self.push_scope(Scope::With);
                let body = self.lower(&child(w.body(), span)?, None);
                self.pop_scope();
                Rc::new(Expr::With { namespace, body: body?, span })
            }
            ast::Expr::Lambda(l) => self.lambda(l, span, name)?,
            ast::Expr::Apply(a) => {
                let func = self.lower(&child(a.lambda(), span)?, None)?;
                let arg = self.lower(&child(a.argument(), span)?, None)?;
                call(func, arg, span)
            }
            ast::Expr::IfElse(i) => Rc::new(Expr::If {
                cond: self.lower(&child(i.condition(), span)?, None)?,
                then: self.lower(&child(i.body(), span)?, None)?,
                else_: self.lower(&child(i.else_body(), span)?, None)?,
                span,
            }),
            ast::Expr::Assert(a) => Rc::new(Expr::Assert {
                cond: self.lower(&child(a.condition(), span)?, None)?,
                body: self.lower(&child(a.body(), span)?, None)?,
                span,
            }),
            ast::Expr::Select(s) => {
                let expr = self.lower(&child(s.expr(), span)?, None)?;
                let path = self.attrpath(&child(s.attrpath(), span)?)?;
                let default = match s.default_expr() {
                    Some(d) => Some(self.lower(&d, None)?),
                    None => None,
                };
                if let Some(v) = known_select(&expr, &path) {
                    return Ok(Rc::new(Expr::Const(v)));
                }
                Rc::new(Expr::Select { expr, path, default, span })
            }
            ast::Expr::HasAttr(h) => {
                let expr = self.lower(&child(h.expr(), span)?, None)?;
                let path = self.attrpath(&child(h.attrpath(), span)?)?;
                Rc::new(Expr::HasAttr { expr, path, span })
            }
            ast::Expr::BinOp(b) => {
                let op = match b.operator() {
                    Some(op) => bin_op(op),
                    None => return Err(parse_error("missing operator", span)),
                };
                let lhs = self.lower(&child(b.lhs(), span)?, None)?;
                let rhs = self.lower(&child(b.rhs(), span)?, None)?;
                Rc::new(Expr::Binary { op, lhs, rhs, span })
            }
            ast::Expr::UnaryOp(u) => {
                let inner = self.lower(&child(u.expr(), span)?, None)?;
                match u.operator() {
                    Some(ast::UnaryOpKind::Invert) => Rc::new(Expr::Not(inner, span)),
                    Some(ast::UnaryOpKind::Negate) => Rc::new(Expr::Negate(inner, span)),
                    None => return Err(parse_error("missing operator", span)),
                }
            }
            ast::Expr::CurPos(_) => Rc::new(Expr::CurPos(span)),
            ast::Expr::Error(_) => return Err(parse_error("syntax error", span)),
        })
    }

    fn literal(&self, lit: &ast::Literal, span: Span) -> EvalResult<Value> {
        Ok(match lit.kind() {
            ast::LiteralKind::Integer(i) => match i.value() {
                Ok(v) => Value::Int(v),
                Err(_) => {
                    return Err(EvalError::new(
                        ErrorKind::Overflow,
                        format!("integer literal {} does not fit in 64 bits", i.syntax().text()),
                    )
                    .at(span))
                }
            },
            ast::LiteralKind::Float(f) => match f.value() {
                Ok(v) => Value::Float(v),
                Err(_) => return Err(parse_error("invalid float literal", span)),
            },
            ast::LiteralKind::Uri(u) => Value::string(u.syntax().text()),
        })
    }

    fn string(&mut self, s: &ast::Str, span: Span) -> EvalResult<ExprRef> {
        let indented = s.syntax().first_token().is_some_and(|t| t.text() == "''");
        let mut parts = Vec::new();
        if indented {
            let mut pieces = Vec::new();
            for part in s.parts() {
                match part {
                    InterpolPart::Literal(c) => indented::lex_literal(c.syntax().text(), &mut pieces),
                    InterpolPart::Interpolation(i) => pieces.push(indented::Piece::Interp(i)),
                }
            }
            for piece in indented::strip(pieces) {
                match piece {
                    indented::Piece::Text { text, .. } => parts.push(StrPart::Lit(text.into())),
                    indented::Piece::Interp(i) => {
                        let ispan = self.span(&i);
                        parts.push(interp_part(self.lower(&child(i.expr(), ispan)?, None)?, ispan));
                    }
                }
            }
        } else {
            for part in s.normalized_parts() {
                match part {
                    InterpolPart::Literal(text) => parts.push(StrPart::Lit(text.into())),
                    InterpolPart::Interpolation(i) => {
                        let ispan = self.span(&i);
                        parts.push(interp_part(self.lower(&child(i.expr(), ispan)?, None)?, ispan));
                    }
                }
            }
        }
        // Adjacent literals merge; empty ones vanish.
        let mut merged: Vec<StrPart> = Vec::with_capacity(parts.len());
        for p in parts {
            match (merged.last_mut(), p) {
                (_, StrPart::Lit(t)) if t.is_empty() => {}
                (Some(StrPart::Lit(prev)), StrPart::Lit(t)) => *prev = format!("{prev}{t}").into(),
                (_, p) => merged.push(p),
            }
        }
        let parts = merged;
        Ok(Rc::new(match parts.as_slice() {
            [] => Expr::Const(Value::string("")),
            [StrPart::Lit(text)] => Expr::Const(Value::String(text.clone())),
            _ => Expr::Str(parts, span),
        }))
    }

    fn path(&mut self, p: &ast::Path, span: Span) -> EvalResult<ExprRef> {
        if let ast::Path::PathSearch(search) = p {
            let text = search.content().map(|c| c.text().to_string()).unwrap_or_default();
            let inner = text.trim_start_matches('<').trim_end_matches('>');
            let (head, rest) = inner.split_once('/').unwrap_or((inner, ""));
            if head != "kdeploy" {
                // As in Nix, `<p>` is `__findFile __nixPath "p"`, looked up
                // when evaluated: a missing entry is an error `tryEval`
                // catches, and a branch never taken is no error at all.
                let find = self.var("__findFile", span, 0)?;
                let search_path = self.var("__nixPath", span, 0)?;
                let partial = Rc::new(Expr::Apply { func: find, arg: search_path, span });
                let name = Rc::new(Expr::Const(Value::string(inner)));
                return Ok(Rc::new(Expr::Apply { func: partial, arg: name, span }));
            }
            return Ok(Rc::new(Expr::Const(Value::Path(path::join(path::STDLIB_ROOT, rest).into()))));
        }
        let mut parts = Vec::new();
        for (i, part) in p.parts().into_iter().enumerate() {
            match part {
                InterpolPart::Literal(c) => {
                    let mut text = c.text().to_string();
                    if i == 0 {
                        if c.is_home() {
                            return Err(EvalError::new(
                                ErrorKind::Forbidden,
                                "paths relative to the home directory are not allowed",
                            )
                            .at(span)
                            .help("evaluation is pure: use a path relative to the project"));
                        }
                        if !text.starts_with('/') {
                            text = format!("{}/{}", self.dir, text);
                        }
                    }
                    parts.push(StrPart::Lit(text.into()));
                }
                InterpolPart::Interpolation(interp) => {
                    let ispan = self.span(&interp);
                    parts.push(interp_part(self.lower(&child(interp.expr(), ispan)?, None)?, ispan));
                }
            }
        }
        Ok(Rc::new(match parts.as_slice() {
            [StrPart::Lit(text)] => Expr::Const(Value::Path(path::normalize(text).into())),
            _ => Expr::Path(parts, span),
        }))
    }

    fn attrpath(&mut self, path: &ast::Attrpath) -> EvalResult<Vec<AttrKey>> {
        path.attrs().map(|a| self.attr_key(&a)).collect()
    }

    fn attr_key(&mut self, attr: &ast::Attr) -> EvalResult<AttrKey> {
        let span = self.span(attr);
        Ok(match attr {
            ast::Attr::Ident(id) => AttrKey::Static(intern(&ident_text(id))),
            ast::Attr::Str(s) => {
                let e = self.string(s, span)?;
                match &*e {
                    Expr::Const(Value::String(text)) => AttrKey::Static(intern(text)),
                    _ => AttrKey::Dynamic(e, span),
                }
            }
            ast::Attr::Dynamic(d) => {
                let e = self.lower(&child(d.expr(), span)?, None)?;
                match &*e {
                    Expr::Const(Value::String(text)) => AttrKey::Static(intern(text)),
                    _ => AttrKey::Dynamic(e, span),
                }
            }
        })
    }

    fn attr_set(&mut self, set: &ast::AttrSet) -> EvalResult<ExprRef> {
        let span = self.span(set);
        let def = self.bindings(set, set.rec_token().is_some(), span)?;
        Ok(Rc::new(Expr::Attrs(Rc::new(def))))
    }

    fn let_in(&mut self, l: &ast::LetIn, span: Span) -> EvalResult<ExprRef> {
        let tree = self.collect(l)?;
        if let Some((_, _, dspan)) = tree.dynamics.first() {
            return Err(EvalError::new(ErrorKind::Parse, "dynamic attributes are not allowed in let").at(*dspan));
        }
        let (frame, body) = self.frame_bindings(&tree, true, |this| this.lower(&child(l.body(), span)?, None))?;
        Ok(Rc::new(Expr::Let { frame, body }))
    }

    /// Lowers the entries of a set or legacy let into an [`AttrsDef`].
    fn bindings(&mut self, node: &impl HasEntry, rec: bool, _span: Span) -> EvalResult<AttrsDef> {
        let mut tree = self.collect(node)?;
        tree.rec = rec;
        self.tree_attrs(&tree)
    }

    /// A set from its merged bindings: recursive or plain as `tree.rec` says.
    fn tree_attrs(&mut self, tree: &Tree) -> EvalResult<AttrsDef> {
        if !tree.rec {
            return self.plain_tree(tree);
        }
        let (frame, (statics, dynamics)) = self.frame_bindings(tree, false, |this| {
            let statics = tree
                .statics
                .iter()
                .enumerate()
                .map(|(i, (name, _, span))| StaticAttr {
                    name: name.clone(),
                    value: Rc::new(Expr::Local { depth: 0, index: i as u32, span: *span }),
                    span: *span,
                })
                .collect();
            Ok((statics, this.dynamic_attrs(tree)?))
        })?;
        let mut statics: Vec<StaticAttr> = statics;
        statics.sort_by(|a, b| a.name.cmp(&b.name));
        // Nix's legacy `__overrides` works in recursive sets only.
        let overrides = tree.index.get("__overrides").map(|&i| i as u32);
        Ok(AttrsDef { frame: Some(frame), statics, dynamics, overrides })
    }

    /// A non-recursive set: values lowered in the current scope, except that
    /// `inherit (e)` sources live in a frame of hidden slots.
    fn plain_tree(&mut self, tree: &Tree) -> EvalResult<AttrsDef> {
        let hidden = !tree.sources.is_empty();
        if hidden {
            self.push_scope(Scope::Frame(HashMap::new()));
        }
        let result = (|| {
            let frame = tree.sources.iter().map(|s| self.lower(s, None)).collect::<EvalResult<Vec<_>>>()?;
            let mut statics = Vec::new();
            for (name, value, span) in &tree.statics {
                let value = self.binding_value(value, name, 0, 0, &tree.sources)?;
                statics.push(StaticAttr { name: name.clone(), value, span: *span });
            }
            statics.sort_by(|a, b| a.name.cmp(&b.name));
            let dynamics = self.dynamic_attrs(tree)?;
            Ok(AttrsDef { frame: hidden.then_some(frame), statics, dynamics, overrides: None })
        })();
        if hidden {
            self.pop_scope();
        }
        result
    }

    fn dynamic_attrs(&mut self, tree: &Tree) -> EvalResult<Vec<DynamicAttr>> {
        let mut out = Vec::new();
        for (key, value, span) in &tree.dynamics {
            let key = self.lower(key, None)?;
            let value = self.binding_value(value, &"<dynamic>".into(), 0, 0, &tree.sources)?;
            out.push(DynamicAttr { key, value, span: *span });
        }
        Ok(out)
    }

    /// Pushes a frame holding every static binding of `tree` followed by the
    /// `inherit (e)` sources, lowers them inside it, then runs `inner` there.
    /// In a `let` (`is_let`; not in a `rec` set, whose slots `__overrides`
    /// may replace), a binding whose value is a builtin known now is
    /// recorded, and the names lowered after it read that builtin as a
    /// constant: the frame still holds it, for anything lowered before.
    fn frame_bindings<T>(
        &mut self,
        tree: &Tree,
        is_let: bool,
        inner: impl FnOnce(&mut Self) -> EvalResult<T>,
    ) -> EvalResult<(Vec<ExprRef>, T)> {
        let mut names = HashMap::new();
        for (i, (name, _, _)) in tree.statics.iter().enumerate() {
            names.insert(name.clone(), i as u32);
        }
        self.push_scope(Scope::Frame(names));
        let result = (|| {
            let base = tree.statics.len();
            let mut frame = Vec::new();
            for (i, (name, value, _)) in tree.statics.iter().enumerate() {
                // `inherit x;` names the enclosing scope, never this frame.
                let e = self.binding_value(value, name, 1, base, &tree.sources)?;
                if let (true, Expr::Const(v @ Value::Builtin(_))) = (is_let, &*e) {
                    if let Some(consts) = self.consts.last_mut() {
                        consts.push((i as u32, v.clone()));
                    }
                }
                frame.push(e);
            }
            for s in &tree.sources {
                frame.push(self.lower(s, None)?);
            }
            Ok((frame, inner(self)?))
        })();
        self.pop_scope();
        result
    }

    fn binding_value(
        &mut self,
        value: &Binding,
        name: &NixString,
        inherit_skip: usize,
        source_base: usize,
        sources: &[ast::Expr],
    ) -> EvalResult<ExprRef> {
        match value {
            Binding::Expr(e) => self.lower(e, Some(name)),
            Binding::Inherit(span) => self.var(name, *span, inherit_skip),
            Binding::InheritFrom { source, span } => {
                // `inherit (builtins) hasAttr;`: the builtin itself.
                if let Some(v) = sources.get(*source).and_then(|s| self.global_attr(s, name)) {
                    return Ok(Rc::new(Expr::Const(v)));
                }
                let from = Rc::new(Expr::Local { depth: 0, index: (source_base + source) as u32, span: *span });
                Ok(Rc::new(Expr::Select {
                    expr: from,
                    path: vec![AttrKey::Static(name.clone())],
                    default: None,
                    span: *span,
                }))
            }
            Binding::Nested(tree) => Ok(Rc::new(Expr::Attrs(Rc::new(self.tree_attrs(tree)?)))),
        }
    }

    /// The value of `source.name` when `source` is a name bound to a global
    /// set (`builtins`, not shadowed) that has `name` with a known value.
    fn global_attr(&self, source: &ast::Expr, name: &str) -> Option<Value> {
        let mut source = source.clone();
        while let ast::Expr::Paren(p) = source {
            source = p.expr()?;
        }
        let ast::Expr::Ident(id) = source else { return None };
        match self.resolve(&ident_text(&id), 0) {
            Resolved::Global(Value::Attrs(a)) => a.get(name)?.peek(),
            _ => None,
        }
    }

    fn lambda(&mut self, l: &ast::Lambda, span: Span, name: Option<&NixString>) -> EvalResult<ExprRef> {
        let param = child(l.param(), span)?;
        let lambda = match param {
            ast::Param::IdentParam(ip) => {
                let id = child(ip.ident(), span)?;
                let arg = NixString::from(ident_text(&id));
                let mut names = HashMap::new();
                names.insert(arg.clone(), 0);
                self.push_scope(Scope::Frame(names));
                let body = self.lower(&child(l.body(), span)?, None);
                self.pop_scope();
                Lambda { param: Param::Ident, body: body?, span, name: name.cloned(), arg: Some(arg) }
            }
            ast::Param::Pattern(p) => {
                let mut names = HashMap::new();
                let mut formal_nodes = Vec::new();
                for entry in p.pat_entries() {
                    let id = child(entry.ident(), span)?;
                    let n: NixString = intern(&ident_text(&id));
                    if names.contains_key(&n) {
                        return Err(EvalError::new(
                            ErrorKind::DuplicateAttribute,
                            format!("duplicate formal function argument '{n}'"),
                        )
                        .at(self.span(&id)));
                    }
                    names.insert(n.clone(), formal_nodes.len() as u32);
                    formal_nodes.push((n, entry.default(), self.span(&id)));
                }
                let arg = match p.pat_bind() {
                    Some(b) => {
                        let id = child(b.ident(), span)?;
                        let n: NixString = ident_text(&id).into();
                        if names.contains_key(&n) {
                            return Err(EvalError::new(
                                ErrorKind::DuplicateAttribute,
                                format!("duplicate formal function argument '{n}'"),
                            )
                            .at(self.span(&id)));
                        }
                        names.insert(n.clone(), formal_nodes.len() as u32);
                        Some(n)
                    }
                    None => None,
                };
                self.push_scope(Scope::Frame(names));
                let result = (|| -> EvalResult<(Vec<Formal>, ExprRef)> {
                    let mut formals = Vec::new();
                    for (n, default, fspan) in formal_nodes {
                        let default = match default {
                            Some(d) => Some(self.lower(&d, None)?),
                            None => None,
                        };
                        formals.push(Formal { name: n, default, span: fspan });
                    }
                    let body = self.lower(&child(l.body(), span)?, None)?;
                    Ok((formals, body))
                })();
                self.pop_scope();
                let (formals, body) = result?;
                let pattern = Pattern { formals, ellipsis: p.ellipsis_token().is_some(), bind: arg.is_some() };
                Lambda { param: Param::Pattern(Rc::new(pattern)), body, span, name: name.cloned(), arg }
            }
        };
        Ok(Rc::new(Expr::Lambda(Rc::new(lambda))))
    }

    /// Gathers the entries of a binding block into a [`Tree`], merging
    /// attribute paths and reporting duplicates.
    fn collect(&mut self, node: &impl HasEntry) -> EvalResult<Tree> {
        let mut tree = Tree::default();
        self.collect_into(&mut tree, node)?;
        Ok(tree)
    }

    fn collect_into(&mut self, tree: &mut Tree, node: &impl HasEntry) -> EvalResult<()> {
        for entry in node.entries() {
            match entry {
                ast::Entry::Inherit(inh) => {
                    let base_span = self.span(&inh);
                    let source = match inh.from() {
                        Some(from) => {
                            let e = child(from.expr(), base_span)?;
                            tree.sources.push(e);
                            Some(tree.sources.len() - 1)
                        }
                        None => None,
                    };
                    for attr in inh.attrs() {
                        let aspan = self.span(&attr);
                        let name = match self.attr_key(&attr)? {
                            AttrKey::Static(n) => n,
                            AttrKey::Dynamic(_, s) => {
                                return Err(EvalError::new(
                                    ErrorKind::Parse,
                                    "dynamic attributes are not allowed in inherit",
                                )
                                .at(s))
                            }
                        };
                        let value = match source {
                            Some(source) => Binding::InheritFrom { source, span: aspan },
                            None => Binding::Inherit(aspan),
                        };
                        tree.insert_static(name, value, aspan)?;
                    }
                }
                ast::Entry::AttrpathValue(apv) => {
                    let span = self.span(&apv);
                    let attrpath = child(apv.attrpath(), span)?;
                    let value = child(apv.value(), span)?;
                    let keys: Vec<ast::Attr> = attrpath.attrs().collect();
                    self.insert_path(tree, &keys, value, span)?;
                }
            }
        }
        Ok(())
    }

    fn insert_path(&mut self, tree: &mut Tree, keys: &[ast::Attr], value: ast::Expr, span: Span) -> EvalResult<()> {
        let (first, rest) = match keys.split_first() {
            Some(x) => x,
            None => return Err(parse_error("empty attribute path", span)),
        };
        let kspan = self.span(first);
        let key = match self.attr_key(first)? {
            AttrKey::Static(n) => n,
            AttrKey::Dynamic(_, _) => {
                // Dynamic keys are evaluated at run time; the rest of the path nests under them.
                let key_expr = match first {
                    ast::Attr::Dynamic(d) => child(d.expr(), kspan)?,
                    ast::Attr::Str(s) => ast::Expr::Str(s.clone()),
                    ast::Attr::Ident(_) => unreachable!("identifiers are static"),
                };
                let binding = self.path_binding(rest, value, span)?;
                tree.dynamics.push((key_expr, binding, kspan));
                return Ok(());
            }
        };
        let Some(existing) = tree.find_mut(&key) else {
            let binding = self.path_binding(rest, value, span)?;
            return tree.insert_static(key, binding, kspan);
        };
        let previous = existing.2;
        let Some(sub) = self.nested(&mut existing.1)? else {
            return Err(duplicate(&key, kspan, previous, &self.file_name));
        };
        if !rest.is_empty() {
            return self.insert_path(sub, rest, value, span);
        }
        // `a = { … }` given twice (or after `a.b = …`): as in Nix, the
        // second set's own bindings join the first, which keeps its `rec`
        // or its lack of one (NixOS/nix#9020); a name both give is a
        // duplicate even when both values are sets.
        let ast::Expr::AttrSet(set) = &value else {
            return Err(duplicate(&key, kspan, previous, &self.file_name));
        };
        let mut more = Tree::default();
        self.collect_into(&mut more, set)?;
        sub.absorb(more)
    }

    /// What a name newly bound by `name.rest = value` holds.
    fn path_binding(&mut self, rest: &[ast::Attr], value: ast::Expr, span: Span) -> EvalResult<Binding> {
        if rest.is_empty() {
            return Ok(Binding::Expr(value));
        }
        let mut sub = Tree::default();
        self.insert_path(&mut sub, rest, value, span)?;
        Ok(Binding::Nested(Box::new(sub)))
    }

    /// The bindings of an attribute-set literal bound to a name, made a
    /// [`Tree`] so that more can be merged into it; `None` when the
    /// binding is something else (another expression, an `inherit`).
    fn nested<'t>(&mut self, binding: &'t mut Binding) -> EvalResult<Option<&'t mut Tree>> {
        if let Binding::Expr(ast::Expr::AttrSet(set)) = binding {
            let set = set.clone();
            let mut sub = Tree { rec: set.rec_token().is_some(), ..Tree::default() };
            self.collect_into(&mut sub, &set)?;
            *binding = Binding::Nested(Box::new(sub));
        }
        Ok(match binding {
            Binding::Nested(sub) => Some(sub),
            _ => None,
        })
    }
}

/// The bindings of one block before lowering, after merging attribute paths.
#[derive(Default)]
struct Tree {
    /// A `rec` set: its bindings see each other.
    rec: bool,
    statics: Vec<(NixString, Binding, Span)>,
    index: HashMap<NixString, usize>,
    dynamics: Vec<(ast::Expr, Binding, Span)>,
    /// Expressions of `inherit (e)`, in order.
    sources: Vec<ast::Expr>,
}

enum Binding {
    Expr(ast::Expr),
    Inherit(Span),
    /// `source` indexes `Tree::sources`.
    InheritFrom {
        source: usize,
        span: Span,
    },
    Nested(Box<Tree>),
}

impl Tree {
    fn insert_static(&mut self, name: NixString, value: Binding, span: Span) -> EvalResult<()> {
        if let Some(&i) = self.index.get(&name) {
            let prev = self.statics[i].2;
            return Err(duplicate(&name, span, prev, ""));
        }
        self.index.insert(name.clone(), self.statics.len());
        self.statics.push((name, value, span));
        Ok(())
    }

    fn find_mut(&mut self, name: &str) -> Option<&mut (NixString, Binding, Span)> {
        let i = *self.index.get(name)?;
        Some(&mut self.statics[i])
    }

    /// Adds the bindings of `more` (a second set literal for the same
    /// name); its `inherit (e)` sources follow this tree's own.
    fn absorb(&mut self, more: Tree) -> EvalResult<()> {
        let offset = self.sources.len();
        self.sources.extend(more.sources);
        for (name, binding, span) in more.statics {
            let binding = match binding {
                Binding::InheritFrom { source, span } => Binding::InheritFrom { source: source + offset, span },
                other => other,
            };
            self.insert_static(name, binding, span)?;
        }
        self.dynamics.extend(more.dynamics);
        Ok(())
    }
}

fn duplicate(name: &str, span: Span, previous: Span, _file: &str) -> Box<EvalError> {
    EvalError::new(ErrorKind::DuplicateAttribute, format!("attribute '{name}' is defined twice"))
        .at(span)
        .label("defined again here")
        .note("first defined here", previous)
}

fn parse_error(msg: &str, span: Span) -> Box<EvalError> {
    EvalError::new(ErrorKind::Parse, msg.to_string()).at(span)
}

/// An interpolated expression as a string part: `${toString x}` with the
/// global builtin (not a local of that name) is [`StrPart::ToString`], the
/// form of most interpolations of numbers; anything else is evaluated and
/// coerced as it stands.
fn interp_part(e: ExprRef, ispan: Span) -> StrPart {
    if let Expr::CallBuiltin { id, args, span, .. } = &*e {
        if let ([arg], "toString") = (&args[..], crate::builtins::name(*id)) {
            return StrPart::ToString(arg.clone(), *span);
        }
    }
    StrPart::Interp(e, ispan)
}

/// `func arg`: an [`Expr::CallBuiltin`] when `func` is a builtin known now
/// applied to its other arguments (if any) and `arg` is its last one.
fn call(func: ExprRef, arg: ExprRef, span: Span) -> ExprRef {
    let mut spine = vec![arg.clone()];
    let mut head = &func;
    while let Expr::Apply { func: f, arg: a, .. } = &**head {
        if spine.len() >= 3 {
            break;
        }
        spine.push(a.clone());
        head = f;
    }
    if let Expr::Const(Value::Builtin(pb)) = &**head {
        if pb.args.is_empty() && crate::builtins::arity(pb.id) == spine.len() {
            spine.reverse();
            let fast = fast_builtin(crate::builtins::name(pb.id));
            return Rc::new(Expr::CallBuiltin { id: pb.id, fast, args: spine.into(), span });
        }
    }
    Rc::new(Expr::Apply { func, arg, span })
}

fn fast_builtin(name: &str) -> FastBuiltin {
    match name {
        "hasAttr" => FastBuiltin::HasAttr,
        "isAttrs" => FastBuiltin::IsAttrs,
        "isList" => FastBuiltin::IsList,
        "isString" => FastBuiltin::IsString,
        "isInt" => FastBuiltin::IsInt,
        "isBool" => FastBuiltin::IsBool,
        "isFunction" => FastBuiltin::IsFunction,
        "length" => FastBuiltin::Length,
        "head" | "tail" | "attrNames" | "attrValues" | "concatLists" | "listToAttrs" | "toString" | "typeOf" => {
            FastBuiltin::Strict
        }
        _ => FastBuiltin::None,
    }
}

/// `set.a.b` of a set known now (`builtins.hasAttr`), when every name is
/// static and there with a known value: no evaluation can fail or differ.
fn known_select(expr: &Expr, path: &[AttrKey]) -> Option<Value> {
    let Expr::Const(v) = expr else { return None };
    let mut v = v.clone();
    for key in path {
        let (AttrKey::Static(name), Value::Attrs(a)) = (key, &v) else { return None };
        let next = a.get(name)?.peek()?;
        v = next;
    }
    Some(v)
}

fn child<T>(node: Option<T>, span: Span) -> EvalResult<T> {
    node.ok_or_else(|| parse_error("incomplete expression", span))
}

/// What rnix accepts but Nix's grammar rejects, so that every file we
/// accept is Nix: a function as an operand, an argument or a list element
/// (`map x: x`, `[ x: x ]`, `1 + x: x`), and a search path that is not
/// names joined by single slashes (`<a/>`, `<a//b>`). Checked over the whole
/// file before lowering: like any syntax error, it comes before an undefined
/// variable.
fn grammar_check(file: FileId, root: &ast::Root) -> EvalResult<()> {
    use rnix::SyntaxKind::*;
    for node in root.syntax().descendants() {
        let span = Span::new(file, node.text_range());
        let in_operand = |p: rnix::SyntaxNode| {
            matches!(p.kind(), NODE_APPLY | NODE_BIN_OP | NODE_UNARY_OP | NODE_LIST | NODE_SELECT | NODE_HAS_ATTR)
        };
        if node.kind() == NODE_LAMBDA && node.parent().is_some_and(in_operand) {
            return Err(parse_error("syntax error: a function here must be in parentheses", span)
                .label("this function")
                .help("put it in parentheses: (x: …)"));
        }
        if let Some(search) = ast::PathSearch::cast(node) {
            let text = search.content().map(|c| c.text().to_string()).unwrap_or_default();
            if text.trim_start_matches('<').trim_end_matches('>').split('/').any(str::is_empty) {
                return Err(parse_error(&format!("syntax error: invalid search path '{text}'"), span)
                    .help("a search path is names joined by single '/', such as <kdeploy/lib.nix>"));
            }
        }
    }
    Ok(())
}

/// Most names interned: more than this many distinct names (generated
/// code) are no longer kept, so the table stays bounded.
const MAX_INTERNED: usize = 1 << 16;

thread_local! {
    static NAMES: RefCell<HashSet<NixString>> = RefCell::new(HashSet::new());
}

/// One shared string per distinct attribute name or formal written in the
/// source: a set built from a literal and a select or pattern naming the
/// same attribute then hold the same pointer, and a lookup matches it
/// without comparing bytes (see `value::find`).
fn intern(name: &str) -> NixString {
    NAMES.with(|names| {
        let mut names = names.borrow_mut();
        if let Some(n) = names.get(name) {
            return n.clone();
        }
        let n: NixString = name.into();
        if names.len() < MAX_INTERNED {
            names.insert(n.clone());
        }
        n
    })
}

fn ident_text(id: &ast::Ident) -> String {
    match id.ident_token() {
        Some(t) => t.text().to_string(),
        // `or` used as an identifier has its own token kind.
        None => id.syntax().text().to_string(),
    }
}

fn bin_op(op: ast::BinOpKind) -> BinOp {
    use ast::BinOpKind as K;
    match op {
        K::Concat => BinOp::Concat,
        K::Update => BinOp::Update,
        K::Add => BinOp::Add,
        K::Sub => BinOp::Sub,
        K::Mul => BinOp::Mul,
        K::Div => BinOp::Div,
        K::And => BinOp::And,
        K::Equal => BinOp::Eq,
        K::Implication => BinOp::Implies,
        K::Less => BinOp::Less,
        K::LessOrEq => BinOp::LessEq,
        K::More => BinOp::Greater,
        K::MoreOrEq => BinOp::GreaterEq,
        K::NotEqual => BinOp::NotEq,
        K::Or => BinOp::Or,
        K::PipeRight => BinOp::PipeRight,
        K::PipeLeft => BinOp::PipeLeft,
    }
}

/// `__curPos` and `unsafeGetAttrPos` results.
pub fn position_attrs(file: &str, line: usize, column: usize) -> Value {
    Value::attrs(Attrs::from_unsorted(vec![
        ("column".into(), Thunk::value(Value::Int(column as i64))),
        ("file".into(), Thunk::value(Value::string(file))),
        ("line".into(), Thunk::value(Value::Int(line as i64))),
    ]))
}

//! Attribute-set builtins: attrNames, attrValues, getAttr, hasAttr,
//! catAttrs, intersectAttrs, listToAttrs, mapAttrs, removeAttrs,
//! zipAttrsWith, groupBy, functionArgs, unsafeGetAttrPos.

use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use super::{Args, BuiltinDef};
use crate::error::{ErrorKind, EvalError, EvalResult};
use crate::eval::{missing_attr, Evaluator};
use crate::ir::{AttrsDef, Expr, Formal, Param, StaticAttr};
use crate::lower::position_attrs;
use crate::repeat::Repeat;
use crate::thunk::Thunk;
use crate::value::{Attrs, NixString, Value};

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "attrNames", arity: 1, func: attr_names },
    BuiltinDef { name: "attrValues", arity: 1, func: attr_values },
    BuiltinDef { name: "getAttr", arity: 2, func: get_attr },
    BuiltinDef { name: "hasAttr", arity: 2, func: has_attr },
    BuiltinDef { name: "catAttrs", arity: 2, func: cat_attrs },
    BuiltinDef { name: "intersectAttrs", arity: 2, func: intersect_attrs },
    BuiltinDef { name: "listToAttrs", arity: 1, func: list_to_attrs },
    BuiltinDef { name: "mapAttrs", arity: 2, func: map_attrs },
    BuiltinDef { name: "removeAttrs", arity: 2, func: remove_attrs },
    BuiltinDef { name: "zipAttrsWith", arity: 2, func: zip_attrs_with },
    BuiltinDef { name: "groupBy", arity: 2, func: group_by },
    BuiltinDef { name: "functionArgs", arity: 1, func: function_args },
    BuiltinDef { name: "unsafeGetAttrPos", arity: 2, func: unsafe_get_attr_pos },
];

fn attr_names(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let a = ev.attrs(&args[0], "the argument of builtins.attrNames")?;
    // Collected straight into the list (the count is known): one
    // allocation, not a vector and then a copy of it.
    Ok(Value::List(a.keys().map(|k| Thunk::value(Value::String(k.clone()))).collect()))
}

fn attr_values(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let a = ev.attrs(&args[0], "the argument of builtins.attrValues")?;
    Ok(Value::List(a.iter().map(|(_, v)| v.clone()).collect()))
}

fn get_attr(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let name = ev.str(&args[0], "the first argument of builtins.getAttr")?;
    let a = ev.attrs(&args[1], "the second argument of builtins.getAttr")?;
    match a.get(&name) {
        Some(t) => ev.force(&t.clone()),
        None => {
            let mut e =
                missing_attr(&name, &a, crate::source::Span { file: crate::source::FileId(0), start: 0, end: 0 });
            e.span = None;
            e.label = None;
            Err(e)
        }
    }
}

fn has_attr(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    // Both arguments known, the usual case (`hasAttr name d.value` in a
    // loop): looked at in place, no reference counts taken and dropped.
    let known = args[1].inspect(|a| match a {
        Value::Attrs(a) => args[0].inspect(|n| match n {
            Value::String(n) => Some(a.contains(n)),
            _ => None,
        }),
        _ => None,
    });
    if let Some(b) = known {
        return Ok(Value::Bool(b));
    }
    let name = ev.str(&args[0], "the first argument of builtins.hasAttr")?;
    let a = ev.attrs(&args[1], "the second argument of builtins.hasAttr")?;
    Ok(Value::Bool(a.contains(&name)))
}

fn cat_attrs(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let name = ev.str(&args[0], "the first argument of builtins.catAttrs")?;
    let list = ev.list(&args[1], "the second argument of builtins.catAttrs")?;
    let mut out = Vec::new();
    for t in list.iter() {
        let a = ev.attrs(t, "an element of the list passed to builtins.catAttrs")?;
        if let Some(v) = a.get(&name) {
            out.push(v.clone());
        }
    }
    Ok(Value::list(out))
}

fn intersect_attrs(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let a = ev.attrs(&args[0], "the first argument of builtins.intersectAttrs")?;
    let b = ev.attrs(&args[1], "the second argument of builtins.intersectAttrs")?;
    let entries = b.iter().filter(|(k, _)| a.contains(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    Ok(Value::attrs(Attrs::from_sorted(entries)))
}

fn list_to_attrs(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let list = ev.list(&args[0], "the argument of builtins.listToAttrs")?;
    let mut entries = Vec::with_capacity(list.len());
    for t in list.iter() {
        let item = ev.attrs(t, "an element of the list passed to builtins.listToAttrs")?;
        let name = item.get("name").cloned().ok_or_else(|| {
            EvalError::new(
                ErrorKind::MissingAttribute,
                "attribute 'name' missing in an element of builtins.listToAttrs",
            )
        })?;
        let name = ev.str(&name, "the 'name' attribute of an element of builtins.listToAttrs")?;
        let value = item.get("value").cloned().ok_or_else(|| {
            EvalError::new(
                ErrorKind::MissingAttribute,
                "attribute 'value' missing in an element of builtins.listToAttrs",
            )
        })?;
        entries.push((name, value));
    }
    // The first occurrence of a name wins; `from_unsorted` keeps the last.
    entries.reverse();
    Ok(Value::attrs(Attrs::from_unsorted(entries)))
}

fn map_attrs(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let f = ev.force(&args[0])?;
    let a = ev.attrs(&args[1], "the second argument of builtins.mapAttrs")?;
    let entries = a
        .iter()
        .map(|(k, v)| (k.clone(), Thunk::apply2(f.clone(), Thunk::value(Value::String(k.clone())), v.clone())))
        .collect();
    Ok(Value::attrs(Attrs::from_sorted(entries)))
}

fn remove_attrs(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let a = ev.attrs(&args[0], "the first argument of builtins.removeAttrs")?;
    let names = ev.list(&args[1], "the second argument of builtins.removeAttrs")?;
    let mut remove = HashSet::new();
    for n in names.iter() {
        remove.insert(ev.str(n, "an element of the list passed to builtins.removeAttrs")?);
    }
    let entries = a.iter().filter(|(k, _)| !remove.contains(*k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    Ok(Value::attrs(Attrs::from_sorted(entries)))
}

fn zip_attrs_with(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let f = ev.force(&args[0])?;
    let sets = ev.list(&args[1], "the second argument of builtins.zipAttrsWith")?;
    let mut grouped: BTreeMap<NixString, Vec<Thunk>> = BTreeMap::new();
    for s in sets.iter() {
        let a = ev.attrs(s, "an element of the list passed to builtins.zipAttrsWith")?;
        for (k, v) in a.iter() {
            grouped.entry(k.clone()).or_default().push(v.clone());
        }
    }
    let entries = grouped
        .into_iter()
        .map(|(k, vs)| {
            let t = Thunk::apply2(f.clone(), Thunk::value(Value::String(k.clone())), Thunk::value(Value::list(vs)));
            (k, t)
        })
        .collect();
    Ok(Value::attrs(Attrs::from_sorted(entries)))
}

fn group_by(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let mut f = Repeat::new(ev.func(&args[0], "the first argument of builtins.groupBy")?);
    let list = ev.list(&args[1], "the second argument of builtins.groupBy")?;
    let mut grouped: BTreeMap<NixString, Vec<Thunk>> = BTreeMap::new();
    for t in list.iter() {
        let key = match f.call1(ev, t.clone())? {
            Value::String(s) => s,
            v => return Err(super::expected("the result of the function passed to builtins.groupBy", "a string", &v)),
        };
        grouped.entry(key).or_default().push(t.clone());
    }
    let entries = grouped.into_iter().map(|(k, vs)| (k, Thunk::value(Value::list(vs)))).collect();
    Ok(Value::attrs(Attrs::from_sorted(entries)))
}

fn function_args(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    match ev.force(&args[0])? {
        Value::Lambda(c) => match &c.lambda.param {
            Param::Ident => Ok(Value::attrs(Attrs::new())),
            Param::Pattern(p) => {
                let has_default = |f: &Formal| Value::Bool(f.default.is_some());
                let entries = p.formals.iter().map(|f| (f.name.clone(), Thunk::value(has_default(f)))).collect();
                // The formals' places, for unsafeGetAttrPos, as in Nix.
                let origin = AttrsDef {
                    frame: None,
                    statics: p
                        .formals
                        .iter()
                        .map(|f| StaticAttr {
                            name: f.name.clone(),
                            value: Rc::new(Expr::Const(has_default(f))),
                            span: f.span,
                        })
                        .collect(),
                    dynamics: Vec::new(),
                    overrides: None,
                };
                Ok(Value::attrs(Attrs::from_unsorted(entries).with_origin(Rc::new(origin))))
            }
        },
        Value::Builtin(_) => Ok(Value::attrs(Attrs::new())),
        v => Err(super::expected("the argument of builtins.functionArgs", "a function", &v)),
    }
}

fn unsafe_get_attr_pos(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let name = ev.str(&args[0], "the first argument of builtins.unsafeGetAttrPos")?;
    let a = ev.attrs(&args[1], "the second argument of builtins.unsafeGetAttrPos")?;
    Ok(match a.position(&name) {
        Some(span) => {
            let (line, col) = ev.sources.line_col(span);
            position_attrs(&ev.sources.get(span.file).name, line, col)
        }
        None => Value::Null,
    })
}

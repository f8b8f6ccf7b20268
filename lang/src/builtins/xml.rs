//! `builtins.toXML`: a value forced deeply and written as Nix 2.8 writes
//! it (`<expr>` around one element per value, two spaces of indentation,
//! attributes of an element sorted by name, sets as `<attrs>` of `<attr>`
//! sorted by name, functions as their argument pattern). A set with
//! `type = "derivation"` is a `<derivation>` element, as in Nix, though
//! kdeploy never makes one. A value inside itself is infinite recursion.

use std::collections::HashSet;
use std::rc::Rc;

use super::pure::float_fmt::format_float_display;
use super::BuiltinDef;
use crate::error::EvalResult;
use crate::eval::{Evaluator, Walk, WATCH_DEPTH};
use crate::ir::Param;
use crate::limits::check_string_len;
use crate::thunk::Thunk;
use crate::value::Value;

pub const DEFS: &[BuiltinDef] = &[BuiltinDef { name: "toXML", arity: 1, func: to_xml }];

fn to_xml(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let v = ev.force(&args[0])?;
    let mut w =
        Writer { out: String::from("<?xml version='1.0' encoding='utf-8'?>\n"), depth: 0, drvs: HashSet::new() };
    w.open("expr", &[]);
    w.value(ev, &v, &mut Walk::watching_from(WATCH_DEPTH))?;
    w.close("expr");
    Ok(Value::string(w.out))
}

struct Writer {
    out: String,
    /// Elements open around the next line.
    depth: usize,
    /// The `drvPath`s of the derivations written so far: a derivation
    /// seen again is `<repeated />`.
    drvs: HashSet<String>,
}

impl Writer {
    fn start(&mut self, name: &str, attrs: &[(&str, &str)]) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push('<');
        self.out.push_str(name);
        for (k, v) in attrs {
            self.out.push(' ');
            self.out.push_str(k);
            self.out.push_str("=\"");
            escape(v, &mut self.out);
            self.out.push('"');
        }
    }

    /// `<name a="…" />`; `attrs` sorted by name.
    fn empty(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.start(name, attrs);
        self.out.push_str(" />\n");
    }

    fn open(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.start(name, attrs);
        self.out.push_str(">\n");
        self.depth += 1;
    }

    fn close(&mut self, name: &str) {
        self.depth -= 1;
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push_str(">\n");
    }

    fn value(&mut self, ev: &mut Evaluator, v: &Value, walk: &mut Walk) -> EvalResult<()> {
        match v {
            Value::Int(i) => self.empty("int", &[("value", &i.to_string())]),
            Value::Bool(b) => self.empty("bool", &[("value", if *b { "true" } else { "false" })]),
            Value::String(s) => self.empty("string", &[("value", s)]),
            Value::Path(p) => self.empty("path", &[("value", p)]),
            Value::Null => self.empty("null", &[]),
            Value::Float(f) => self.empty("float", &[("value", &format_float_display(*f))]),
            Value::Builtin(_) => self.empty("unevaluated", &[]),
            Value::Lambda(c) => {
                self.open("function", &[]);
                match &c.lambda.param {
                    Param::Ident => self.empty("varpat", &[("name", c.lambda.arg.as_deref().unwrap_or(""))]),
                    Param::Pattern(p) => {
                        let mut attrs = Vec::new();
                        if p.ellipsis {
                            attrs.push(("ellipsis", "1"));
                        }
                        if let Some(name) = c.lambda.arg.as_deref() {
                            attrs.push(("name", name));
                        }
                        self.open("attrspat", &attrs);
                        let mut names: Vec<&str> = p.formals.iter().map(|f| &*f.name).collect();
                        names.sort_unstable();
                        for n in names {
                            self.empty("attr", &[("name", n)]);
                        }
                        self.close("attrspat");
                    }
                }
                self.close("function");
            }
            Value::List(items) => {
                let key = (items.as_ptr() as *const u8 as usize, 0);
                ev.walk_into(walk, key, |ev, walk| {
                    self.open("list", &[]);
                    for t in items.iter() {
                        let x = ev.force(t)?;
                        self.value(ev, &x, walk)?;
                    }
                    self.close("list");
                    Ok(())
                })?;
            }
            Value::Attrs(a) => {
                let key = (Rc::as_ptr(a) as usize, 0);
                let derivation = match a.get("type") {
                    Some(t) => matches!(ev.force(&t.clone())?, Value::String(s) if &*s == "derivation"),
                    None => false,
                };
                ev.walk_into(walk, key, |ev, walk| {
                    let element = if derivation { "derivation" } else { "attrs" };
                    let mut shown = true;
                    if derivation {
                        let mut paths = Vec::new();
                        for name in ["drvPath", "outPath"] {
                            if let Some(t) = a.get(name) {
                                if let Value::String(s) = ev.force(&t.clone())? {
                                    paths.push((name, s.to_string()));
                                }
                            }
                        }
                        let drv = paths.iter().find(|(n, _)| *n == "drvPath").map(|(_, p)| p.clone());
                        shown = drv.is_some_and(|d| !d.is_empty() && self.drvs.insert(d));
                        let attrs: Vec<(&str, &str)> = paths.iter().map(|(n, p)| (*n, p.as_str())).collect();
                        self.open(element, &attrs);
                    } else {
                        self.open(element, &[]);
                    }
                    if shown {
                        for (k, t) in a.iter() {
                            self.open("attr", &[("name", k)]);
                            let x = ev.force(t)?;
                            self.value(ev, &x, walk)?;
                            self.close("attr");
                        }
                    } else {
                        self.empty("repeated", &[]);
                    }
                    self.close(element);
                    Ok(())
                })?;
            }
        }
        check_string_len(self.out.len())
    }
}

/// An attribute value as Nix's XML writer escapes it (a newline too, so
/// that XML readers keep it).
fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' => out.push_str("&#xA;"),
            c => out.push(c),
        }
    }
}

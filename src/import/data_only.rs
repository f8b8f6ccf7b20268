//! The check that a cluster file the import wrote holds only data, made
//! before the import evaluates it: the inventory is untrusted, and although
//! everything from it is quoted (`nix_text`), a slip there must stop the
//! import, not run the inventory's code. The file parses, and its tree is
//! exactly `let kd = import <kdeploy>; in kd.cluster { … }` where the set
//! holds only literals: strings without antiquotation, numbers (a negative
//! one in parentheses), `true`, `false`, `null`, lists, non-recursive sets
//! whose names are identifiers, strings or `${…}` of a string, and
//! `builtins.fromJSON "…"` (how a string with a character Nix cannot
//! escape is written). No other name is referred to and no other function
//! called, so evaluating it has no side effect (no trace, no file read).

use rnix::ast::{self, HasEntry, InterpolPart, LiteralKind, UnaryOpKind};
use rowan::ast::AstNode;

use super::error::NotData;

/// Whether `text` is a cluster file of data only; if not, where it is not.
pub fn check(text: &str) -> Result<(), NotData> {
    let parsed = kdeploy_lang::parse::parse(text).map_err(|_| NotData::TooDeep)?;
    if let Some(e) = parsed.errors.first() {
        return Err(NotData::Parse { reason: e.to_string() });
    }
    let Some(ast::Expr::LetIn(top)) = parsed.root.expr() else { return Err(NotData::NotLet) };
    let bindings: Vec<_> = top.entries().collect();
    let binds_kd = match &bindings[..] {
        [ast::Entry::AttrpathValue(b)] => {
            is_path(b.attrpath(), &["kd"])
                && matches!(b.value(), Some(ast::Expr::Apply(a))
                    if is_name(a.lambda(), "import")
                        && matches!(a.argument(), Some(ast::Expr::PathSearch(p)) if p.syntax().text() == "<kdeploy>"))
        }
        _ => false,
    };
    if !binds_kd {
        return Err(NotData::Binds);
    }
    match top.body() {
        Some(ast::Expr::Apply(a))
            if matches!(a.lambda(), Some(ast::Expr::Select(s))
                if is_name(s.expr(), "kd") && is_path(s.attrpath(), &["cluster"]) && s.default_expr().is_none()) =>
        {
            data(a.argument())
        }
        _ => Err(NotData::Body),
    }
}

/// `e` is the identifier `name`.
fn is_name(e: Option<ast::Expr>, name: &str) -> bool {
    matches!(e, Some(ast::Expr::Ident(i)) if i.syntax().text() == name)
}

/// `p` is the attribute path of the identifiers `names`.
fn is_path(p: Option<ast::Attrpath>, names: &[&str]) -> bool {
    let Some(p) = p else { return false };
    let attrs: Vec<_> = p.attrs().collect();
    attrs.len() == names.len()
        && attrs.iter().zip(names).all(|(a, n)| matches!(a, ast::Attr::Ident(i) if i.syntax().text() == *n))
}

/// A string without antiquotation.
fn plain(s: &ast::Str) -> bool {
    s.parts().all(|p| matches!(p, InterpolPart::Literal(_)))
}

/// `builtins.fromJSON "…"`, in parentheses.
fn from_json(e: Option<ast::Expr>) -> bool {
    let Some(ast::Expr::Paren(p)) = e else { return false };
    matches!(p.expr(), Some(ast::Expr::Apply(a))
        if matches!(a.lambda(), Some(ast::Expr::Select(s))
            if is_name(s.expr(), "builtins") && is_path(s.attrpath(), &["fromJSON"]) && s.default_expr().is_none())
            && matches!(a.argument(), Some(ast::Expr::Str(s)) if plain(&s)))
}

fn data(e: Option<ast::Expr>) -> Result<(), NotData> {
    let refuse = |e: &ast::Expr| Err(NotData::Expr { text: e.syntax().text().to_string() });
    let Some(e) = e else { return Err(NotData::Missing) };
    match &e {
        ast::Expr::Str(s) if plain(s) => Ok(()),
        ast::Expr::Literal(l) if !matches!(l.kind(), LiteralKind::Uri(_)) => Ok(()),
        ast::Expr::Ident(i) if matches!(i.syntax().text().to_string().as_str(), "true" | "false" | "null") => Ok(()),
        ast::Expr::List(l) => l.items().try_for_each(|i| data(Some(i))),
        ast::Expr::AttrSet(s) if s.rec_token().is_none() => s.entries().try_for_each(|entry| match entry {
            ast::Entry::AttrpathValue(b) => {
                let Some(path) = b.attrpath() else { return Err(NotData::Unnamed) };
                path.attrs().try_for_each(attr_name)?;
                data(b.value())
            }
            ast::Entry::Inherit(i) => Err(NotData::Expr { text: i.syntax().text().to_string() }),
        }),
        ast::Expr::Paren(p) => match p.expr() {
            Some(ast::Expr::UnaryOp(u))
                if u.operator() == Some(UnaryOpKind::Negate) && matches!(u.expr(), Some(ast::Expr::Literal(_))) =>
            {
                data(u.expr())
            }
            _ if from_json(Some(e.clone())) => Ok(()),
            _ => refuse(&e),
        },
        _ => refuse(&e),
    }
}

fn attr_name(a: ast::Attr) -> Result<(), NotData> {
    match &a {
        ast::Attr::Ident(_) => Ok(()),
        ast::Attr::Str(s) if plain(s) => Ok(()),
        ast::Attr::Dynamic(d) if from_json(d.expr()) => Ok(()),
        _ => Err(NotData::AttrName { text: a.syntax().text().to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(settings: &str) -> String {
        format!("# a comment\nlet kd = import <kdeploy>; in\nkd.cluster {{\n  {settings}\n}}\n")
    }

    #[test]
    fn data_passes() {
        let ok = r#"name = "c"; nodes = { n1 = { address = "10.0.0.1"; roles = [ "etcd" ]; }; };
            settings = { a.b = [ 1 (-2) 2.5 true false null { } [ ] ]; "x y" = { ${(builtins.fromJSON "\"\\u001b\"")} = (builtins.fromJSON "\"\\u001b\""); }; };"#;
        assert_eq!(check(&file(ok)), Ok(()));
    }

    #[test]
    fn code_is_refused() {
        for bad in [
            "a = builtins.trace \"x\" 1;",
            "a = \"${builtins.readFile /etc/passwd}\";",
            "a = x;",
            "a = rec { b = 1; };",
            "a = { inherit kd; };",
            "${\"a\" + \"b\"} = 1;",
            "a = (builtins.fromJSON (toString 1));",
            "a = ./x;",
            "a = 1 + 1;",
            "a = (builtins.trace 1 2);",
            "a = 1; } // { b = 2;",
        ] {
            assert!(check(&file(bad)).is_err(), "{bad}");
        }
        assert!(check("let kd = import <kdeploy>; x = 1; in kd.cluster { }").is_err());
        assert!(check("let kd = import ./x.nix; in kd.cluster { }").is_err());
        assert!(check("let kd = import <kdeploy>; in kd.other { }").is_err());
        assert!(check("let kd = import <kdeploy>; in kd.cluster { } // { }").is_err());
    }
}

//! Nix source text for data: a JSON value as the Nix expression that
//! evaluates to it, string literals and attribute names that read back
//! exactly (what `kdeploy options` prints as defaults and `kdeploy import`
//! writes as settings).

use serde_json::Value as Json;

/// A JSON value written as the Nix expression that evaluates to it.
pub fn nix_literal(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => nix_string(s),
        Json::Array(items) if items.is_empty() => "[ ]".into(),
        Json::Array(items) => format!("[ {} ]", items.iter().map(nix_literal).collect::<Vec<_>>().join(" ")),
        Json::Object(m) if m.is_empty() => "{ }".into(),
        Json::Object(m) => {
            let attrs: Vec<String> =
                m.iter().map(|(k, v)| format!("{} = {};", nix_attr_name(k), nix_literal(v))).collect();
            format!("{{ {} }}", attrs.join(" "))
        }
    }
}

/// A string literal that reads back as `s` (an antiquotation escaped).
pub fn nix_string(s: &str) -> String {
    let mut out = String::new();
    kdeploy_lang::print::quote_string(s, &mut out);
    out.replace("${", "\\${")
}

pub fn nix_attr_name(k: &str) -> String {
    if kdeploy_lang::print::is_ident(k) {
        k.to_string()
    } else {
        nix_string(k)
    }
}

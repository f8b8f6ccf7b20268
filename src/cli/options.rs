//! `kdeploy options [FILTER]`: every option the stdlib declares (from
//! `kd.options`): path, type, default, scope, Kubespray variable and
//! description. FILTER keeps options whose path, description or Kubespray
//! name contains it (case-insensitive). With `--cluster FILE` it also shows
//! the cluster-wide value where that cluster resolves it differently.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Deserialize;
use serde_json::Value as Json;

use super::eval::report;
use super::inputs::{self, Failure, Inputs};
use crate::nix_text::nix_literal;

#[derive(Args)]
#[command(after_help = "\
Examples:
  kdeploy options                       # all options
  kdeploy options maxPods               # kubelet.maxPods
  kdeploy options containerd --cluster clusters/lab.nix
  kdeploy options --json")]
pub struct OptionsArgs {
    /// Keep options whose path, description or Kubespray variable contains this (case-insensitive).
    filter: Option<String>,
    /// Also show each option's cluster-wide value in this cluster when it differs from the default.
    #[arg(long, value_name = "FILE")]
    cluster: Option<PathBuf>,
    /// Print the selected options as JSON in the shape of NixOS's options.json (keyed by option
    /// path: loc, type, description, default and example as literalExpression, declarations,
    /// readOnly), plus kdeploy's "kubespray", "scope", "values" and, with --cluster, "value".
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    inputs: Inputs,
}

/// One record of `kd.options`.
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OptionDoc {
    default: Json,
    description: String,
    example: Json,
    pub(super) kubespray: Option<String>,
    pub(super) path: String,
    pub(super) scope: String,
    #[serde(rename = "type")]
    pub(super) ty: String,
    values: Json,
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    value: Option<Json>,
}

/// NixOS's options.json shape (what `nixos-option`, the NixOS manual and
/// editor tooling read), with kdeploy's own fields beside.
fn options_json(docs: &[OptionDoc]) -> Json {
    let literal = |v: &Json| serde_json::json!({ "_type": "literalExpression", "text": nix_literal(v) });
    let mut out = serde_json::Map::new();
    for d in docs {
        let mut o = serde_json::json!({
            "declarations": [],
            "default": literal(&d.default),
            "description": d.description,
            "loc": d.path.split('.').collect::<Vec<_>>(),
            "readOnly": false,
            "type": d.ty,
            "kubespray": d.kubespray,
            "scope": d.scope,
            "values": d.values,
        });
        if !d.example.is_null() {
            o["example"] = literal(&d.example);
        }
        if let Some(v) = &d.value {
            o["value"] = v.clone();
        }
        out.insert(d.path.clone(), o);
    }
    Json::Object(out)
}

/// Every option the stdlib declares (`kd.options`).
pub(super) fn option_docs(session: &mut kdeploy_lang::Session) -> Result<Vec<OptionDoc>, Failure> {
    let v = session.eval_expr("(import <kdeploy>).options", &PathBuf::from("."), &[])?;
    let json = session.to_json(&v)?;
    serde_json::from_str(&json).map_err(|e| Failure::Closure(format!("kd.options has an unexpected shape: {e}")))
}

pub fn run(args: OptionsArgs) -> ExitCode {
    let mut session = args.inputs.session(args.cluster.as_deref());
    let result = (|| {
        let mut docs = option_docs(&mut session)?;
        if let Some(f) = &args.filter {
            let f = f.to_lowercase();
            docs.retain(|d| {
                d.path.to_lowercase().contains(&f)
                    || d.description.to_lowercase().contains(&f)
                    || d.kubespray.as_deref().is_some_and(|k| k.to_lowercase().contains(&f))
            });
        }
        if let Some(file) = &args.cluster {
            let value = inputs::eval_file(&mut session, file, None, &args.inputs.args())?;
            if !inputs::is_cluster(&value) {
                return Err(Failure::Usage(format!("{}: not a cluster value", file.display())));
            }
            let settings = session.select(value, "settings", &[])?;
            let settings: Json = serde_json::from_str(&session.to_json(&settings)?).unwrap_or(Json::Null);
            for d in &mut docs {
                let mut at = &settings;
                for part in d.path.split('.') {
                    at = at.get(part).unwrap_or(&Json::Null);
                }
                if *at != d.default {
                    d.value = Some(at.clone());
                }
            }
        }
        if args.json {
            return Ok(serde_json::to_string_pretty(&options_json(&docs)).expect("JSON") + "\n");
        }
        let mut o = String::new();
        for d in &docs {
            let _ = writeln!(o, "{}  ({}; {})", d.path, d.ty, d.scope);
            let _ = writeln!(o, "    default: {}", d.default);
            if let Some(v) = &d.value {
                let _ = writeln!(o, "    in this cluster: {v}");
            }
            if !d.example.is_null() {
                let _ = writeln!(o, "    example: {}", d.example);
            }
            if let Some(k) = &d.kubespray {
                let _ = writeln!(o, "    kubespray: {k}");
            }
            for l in d.description.lines() {
                let _ = writeln!(o, "    {l}");
            }
        }
        let _ = writeln!(o, "{} option{}", docs.len(), if docs.len() == 1 { "" } else { "s" });
        Ok(o)
    })();
    match result {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(f) => report(&session, f),
    }
}

//! `kdeploy import kubespray INVENTORY_DIR`: print a cluster file made from a
//! Kubespray inventory (see `import/`). The result is evaluated before it is
//! printed: a setting the stdlib refuses (a value outside an option's type,
//! a rule broken) is moved to the "not imported" list with the stdlib's
//! message, so what is printed evaluates and nothing is lost silently.
//! The inventory is untrusted: what is evaluated (and printed) is checked
//! to be data only first (`import::data_only`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use kdeploy_lang::Session;

use super::inputs::Failure;
use super::options::option_docs;
use super::{EXIT_ERROR, EXIT_USAGE};
use crate::import::{self, Imported, OptionRef};

#[derive(Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    from: From,
}

#[derive(Subcommand)]
enum From {
    /// A Kubespray inventory directory: inventory.ini or hosts.yaml, group_vars/, host_vars/.
    #[command(after_help = "\
Groups give roles (kube_control_plane -> control-plane, etcd -> etcd, kube_node ->
worker); `ip`, else `ansible_host`, the address; variables become settings by their
Kubespray names (`kdeploy options` shows each option's), at the cluster (all,
k8s_cluster), role or node level. Jinja templates, variables without a kdeploy
option and values the stdlib refuses are listed as comments at the end.

Exit codes: 0 printed (it evaluates), 1 the result does not evaluate (printed with
the error), 2 the inventory cannot be read.

Examples:
  kdeploy import kubespray inventory/mycluster > clusters/mycluster.nix
  kdeploy import kubespray inventory/mycluster -o clusters/mycluster.nix")]
    Kubespray(KubesprayArgs),
}

#[derive(Args)]
struct KubesprayArgs {
    /// The inventory directory (what `ansible-playbook -i` is given).
    dir: PathBuf,
    /// Write the cluster file here instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// How many refused settings are moved aside before giving up.
const MAX_REFUSED: usize = 64;
const FILE_NAME: &str = "kubespray-import.nix";

pub fn run(args: ImportArgs) -> ExitCode {
    let From::Kubespray(args) = args.from;
    let mut session = Session::new(vec![PathBuf::from(".")], crate::stdlib::stdlib(None));
    let options = match option_refs(&mut session) {
        Ok(o) => o,
        Err(e) => return super::eval::report(&session, e),
    };
    let mut imported = match import::kubespray(&args.dir, &options) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let (text, problem) = match settle(&mut imported) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let written = match &args.output {
        Some(f) => std::fs::write(f, &text).map_err(|e| format!("{}: {e}", f.display())),
        None => std::io::stdout().lock().write_all(text.as_bytes()).map_err(|e| e.to_string()),
    };
    if let Err(e) = written {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_ERROR);
    }
    let settings = imported.settings.len()
        + imported.roles.values().map(Vec::len).sum::<usize>()
        + imported.nodes.iter().map(|n| n.settings.len()).sum::<usize>();
    eprintln!(
        "imported {} node(s) and {settings} setting(s) from {}; {} variable(s) not imported (listed at the end)",
        imported.nodes.len(),
        args.dir.display(),
        imported.skipped.len()
    );
    match problem {
        None => ExitCode::SUCCESS,
        Some(e) => {
            eprintln!("error: the result does not evaluate:\n{e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn option_refs(session: &mut Session) -> Result<BTreeMap<String, OptionRef>, Failure> {
    let mut out = BTreeMap::new();
    for d in option_docs(session)? {
        let Some(k) = d.kubespray.filter(|k| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        else {
            continue;
        };
        out.entry(k).or_insert(OptionRef { path: d.path, scope: d.scope, ty: d.ty });
    }
    Ok(out)
}

/// Render and evaluate until the file evaluates: each error that points
/// at a setting's line moves that setting to the not-imported list.
/// Returns the text and, if it still does not evaluate, the error.
fn settle(imported: &mut Imported) -> Result<(String, Option<String>), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let file = dir.path().join(FILE_NAME);
    for _ in 0..MAX_REFUSED {
        let (text, lines) = render(imported)?;
        std::fs::write(&file, &text).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut s = Session::new(vec![dir.path().to_path_buf()], crate::stdlib::stdlib(None));
        let err = match s.eval_file(&file, &[]).and_then(|v| s.to_json(&v)) {
            Ok(_) => return Ok((text, None)),
            Err(e) => e,
        };
        let rendered = s.render_error(&err, false);
        match line_of(&rendered).and_then(|l| lines.iter().find(|(n, _)| *n == l)) {
            Some((_, at)) => imported.refuse(*at, &why(&err.message)),
            None => return Ok((text, Some(rendered))),
        }
    }
    let (text, _) = render(imported)?;
    Ok((text, Some(format!("more than {MAX_REFUSED} settings refused"))))
}

/// The file's text and the line of each setting, if it is data only: the
/// inventory is untrusted, and only data is evaluated or printed.
fn render(imported: &Imported) -> Result<(String, Vec<(usize, import::SettingAt)>), String> {
    let (text, lines) = import::render(imported);
    import::data_only::check(&text)
        .map_err(|e| format!("the generated file is not data only, so it is neither evaluated nor printed: {e}"))?;
    Ok((text, lines))
}

/// The first line of the generated file an error shows.
fn line_of(rendered: &str) -> Option<usize> {
    let at = rendered.find(&format!("{FILE_NAME}:"))? + FILE_NAME.len() + 1;
    rendered[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// The stdlib's message, without the prefix and the generated file's place.
fn why(message: &str) -> String {
    let m = message.strip_prefix("kdeploy: ").unwrap_or(message);
    let m = m.lines().next().unwrap_or(m);
    let place = m.find(FILE_NAME).and_then(|k| Some((m[..k].rfind('(')?, k + m[k..].find(')')?)));
    match place {
        Some((open, close)) => format!("{}{}", m[..open].trim_end(), &m[close + 1..]),
        None => m.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_line_and_reason() {
        let r = "  × kdeploy: option 'x' in settings (/tmp/a/kubespray-import.nix:12:5): expected an integer\n ╭─[/tmp/a/kubespray-import.nix:12:5]";
        assert_eq!(line_of(r), Some(12));
        assert_eq!(
            why("kdeploy: option 'x' in settings (/tmp/a/kubespray-import.nix:12:5): expected an integer"),
            "option 'x' in settings: expected an integer"
        );
    }
}

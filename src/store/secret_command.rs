//! Running a `secretCommand`: the program a cluster names to print one of
//! the user's keys or tokens (`pass show …`, a vault client), as colmena's
//! `keyCommand`. Its argv runs without a shell, in the project root, with
//! nothing on stdin; what it prints on stdout is the secret. It is bounded
//! like a secret file (1 MiB) and in time ([`DEADLINE`]); a failure is told
//! by its exit status and the first lines of its stderr, never its stdout.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::content::MAX_SECRET_FILE;

/// How long the program may take (a password manager may wait for an
/// agent, never for a person: stdin is closed).
pub const DEADLINE: Duration = Duration::from_secs(60);

/// How much of its stderr a failure quotes.
const STDERR_SHOWN: u64 = 2048;

/// The program's stdout, or why there is none.
pub fn run(argv: &[String], cwd: &Path) -> Result<Vec<u8>, String> {
    let (program, args) = argv.split_first().ok_or("names no program")?;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let out = child.stdout.take().map(|o| std::thread::spawn(move || read_bounded(o, MAX_SECRET_FILE + 1)));
    let err = child.stderr.take().map(|e| std::thread::spawn(move || read_bounded(e, STDERR_SHOWN)));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < DEADLINE => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("did not finish within {} s and was killed", DEADLINE.as_secs()));
            }
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    };
    let stdout = out.and_then(|t| t.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|t| t.join().ok()).unwrap_or_default();
    if !status.success() {
        let said = String::from_utf8_lossy(&stderr);
        let said: String = said.chars().map(|c| if c.is_control() && c != '\n' { ' ' } else { c }).collect();
        let said = said.trim();
        let code = status.code().map_or_else(|| "killed by a signal".to_string(), |c| format!("exited with {c}"));
        return Err(if said.is_empty() { code } else { format!("{code}: {said}") });
    }
    if stdout.len() as u64 > MAX_SECRET_FILE {
        return Err(format!("printed more than {MAX_SECRET_FILE} bytes, too large for a secret"));
    }
    if stdout.is_empty() {
        return Err("printed nothing".to_string());
    }
    Ok(stdout)
}

/// At most `limit` bytes of `r`, the rest read and dropped (so the
/// program never blocks on a full pipe).
fn read_bounded(mut r: impl Read, limit: u64) -> Vec<u8> {
    let mut kept = Vec::new();
    let _ = (&mut r).take(limit).read_to_end(&mut kept);
    let _ = std::io::copy(&mut r, &mut std::io::sink());
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn its_stdout_is_the_secret_and_it_runs_in_the_project() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("key"), "s3cret\n").unwrap();
        assert_eq!(run(&sh("cat key"), dir.path()).unwrap(), b"s3cret\n");
    }

    #[test]
    fn a_failure_quotes_its_stderr_never_its_stdout() {
        let e = run(&sh("echo leaked; echo 'no such entry' >&2; exit 3"), Path::new("/")).unwrap_err();
        assert_eq!(e, "exited with 3: no such entry");
        assert!(!e.contains("leaked"));
    }

    #[test]
    fn nothing_printed_or_too_much_is_refused() {
        assert_eq!(run(&sh("true"), Path::new("/")).unwrap_err(), "printed nothing");
        let e = run(&sh("head -c 1048577 /dev/zero"), Path::new("/")).unwrap_err();
        assert!(e.contains("too large for a secret"), "{e}");
    }

    #[test]
    fn a_missing_program_is_named() {
        let e = run(&["/nonexistent/kd-pass".to_string()], Path::new("/")).unwrap_err();
        assert!(e.starts_with("cannot start /nonexistent/kd-pass"), "{e}");
    }

    #[test]
    fn no_shell_reads_its_words() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(&["echo".into(), "$HOME; rm -rf x".into()], dir.path()).unwrap();
        assert_eq!(out, b"$HOME; rm -rf x\n");
    }
}

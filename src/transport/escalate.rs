//! Privilege escalation for non-root logins (Kubespray's `become`): every
//! command kdeploy runs on a node needs root, so a login as another user
//! runs each one through `sudo -n` (or `doas -n`) as one `sh -c` word.
//! Non-interactive on purpose: a password prompt would hang a parallel run,
//! so a user without passwordless escalation is refused at connect time
//! with a message saying what to change.

use super::{shell_quote, Error};

/// How a non-root login becomes root (the cluster's `ssh.become`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Escalation {
    Sudo,
    Doas,
}

impl Escalation {
    /// The method for `user` given the cluster's `ssh.become` ("sudo",
    /// "doas" or "none"): root never escalates, nor does "none".
    pub fn for_login(user: &str, method: &str) -> Result<Option<Escalation>, Error> {
        if user == "root" {
            return Ok(None);
        }
        match method {
            "sudo" => Ok(Some(Escalation::Sudo)),
            "doas" => Ok(Some(Escalation::Doas)),
            "none" => Ok(None),
            other => Err(Error::Become { method: other.to_string() }),
        }
    }

    pub fn program(self) -> &'static str {
        match self {
            Escalation::Sudo => "sudo",
            Escalation::Doas => "doas",
        }
    }

    /// `command` run as root: the whole line stays one shell word, so its
    /// redirections, pipes and variables are the root shell's, not the
    /// login shell's. `-n`: fail rather than ask for a password.
    pub fn wrap(self, command: &str) -> String {
        match self {
            Escalation::Sudo => format!("sudo -n -- sh -c {}", shell_quote(command)),
            Escalation::Doas => format!("doas -n sh -c {}", shell_quote(command)),
        }
    }

    /// Why a probe (`id -u` through [`Escalation::wrap`]) that did not print
    /// 0 failed, as advice to the user.
    pub fn refusal(self, user: &str, stdout: &str, stderr: &str) -> String {
        let got = if stderr.trim().is_empty() {
            format!("it printed uid {:?}", stdout.trim())
        } else {
            stderr.trim().to_string()
        };
        let grant = match self {
            Escalation::Sudo => format!("'{user} ALL=(ALL) NOPASSWD: ALL' in /etc/sudoers.d/"),
            Escalation::Doas => format!("'permit nopass {user}' in /etc/doas.conf"),
        };
        format!(
            "logged in, but `{} -n` does not make {user} root ({got}); kdeploy needs root on every node: \
             grant {grant}, or log in as root (ssh.user)",
            self.program()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_none_do_not_escalate() {
        assert_eq!(Escalation::for_login("root", "sudo"), Ok(None));
        assert_eq!(Escalation::for_login("ubuntu", "none"), Ok(None));
        assert_eq!(Escalation::for_login("ubuntu", "sudo"), Ok(Some(Escalation::Sudo)));
        assert_eq!(Escalation::for_login("ubuntu", "doas"), Ok(Some(Escalation::Doas)));
        assert!(Escalation::for_login("ubuntu", "su").is_err());
    }

    #[test]
    fn wrapped_command_is_one_word_for_the_root_shell() {
        let inner = "cat > '/var/lib/x' && echo \"$HOME\" | wc -c";
        let wrapped = Escalation::Sudo.wrap(inner);
        assert!(wrapped.starts_with("sudo -n -- sh -c '"));
        // what the login shell hands to sudo is exactly the inner line
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("set -- {}; printf %s \"$6\"", wrapped.replacen("sudo -n -- ", "x x x ", 1)))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), inner);
    }
}

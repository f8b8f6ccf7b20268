//! Kubernetes upgrades: what a change of `kubernetes.version` between the
//! deployed generation and the new one allows. Kubernetes supports moving
//! one minor version at a time, and its version-skew policy forbids a
//! kubelet newer than the API server, so a jump of more than one minor
//! version, a change of major version or a minor downgrade is refused
//! before any node is touched; an allowed upgrade activates its phases in
//! the stdlib's upgrade order (the control plane before the kubelets).

use std::fmt;

use super::error::UpgradeRefused;
use super::plan::Step;

/// `major.minor.patch` of a Kubernetes version (`v1.31.2` or `1.31.2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub fn parse(s: &str) -> Option<Version> {
        let core = s.strip_prefix('v').unwrap_or(s).split(['-', '+']).next()?;
        let mut it = core.split('.').map(|p| p.parse::<u32>().ok());
        let v = Version { major: it.next()??, minor: it.next()??, patch: it.next().unwrap_or(Some(0))? };
        it.next().is_none().then_some(v)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// An allowed change of version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upgrade {
    pub from: Version,
    pub to: Version,
}

/// What moving from the deployed version `from` (none: a first switch, or
/// a generation recorded before versions were) to `to` means: `Ok(None)`
/// when nothing changes version, `Ok(Some)` for an allowed upgrade (one
/// minor version up at most, or a newer patch), `Err` with the reason when
/// Kubernetes does not support it.
pub fn check(from: Option<&str>, to: &str) -> Result<Option<Upgrade>, UpgradeRefused> {
    let Some(from) = from else { return Ok(None) };
    let parse = |s: &str| Version::parse(s).ok_or_else(|| UpgradeRefused::NotAVersion { version: s.to_string() });
    let (from, to) = (parse(from)?, parse(to)?);
    if from == to {
        return Ok(None);
    }
    if from.major != to.major {
        return Err(UpgradeRefused::Major { from, to });
    }
    if to < from {
        // kubeadm refuses any downgrade, a patch one included
        return Err(UpgradeRefused::Downgrade { from, to });
    }
    if to.minor > from.minor + 1 {
        return Err(UpgradeRefused::MinorJump { from, to });
    }
    Ok(Some(Upgrade { from, to }))
}

/// An upgrade changes every node (the control planes before any kubelet,
/// each drained from the anchor); a run on some nodes only would record
/// the new version with the others left behind, and the next run would no
/// longer see an upgrade to finish. `selected` of `all` nodes.
pub fn whole(upgrade: &Upgrade, selected: usize, all: usize) -> Result<(), UpgradeRefused> {
    if selected < all {
        return Err(UpgradeRefused::Partial { from: upgrade.from, to: upgrade.to, selected, all });
    }
    Ok(())
}

/// Hooks marked for upgrades (`kubeadm upgrade`, drain, uncordon) stay
/// in the steps only when the run upgrades.
pub fn keep_hooks(steps: &mut [Step], upgrading: bool) {
    for s in steps {
        s.hooks.retain(|h| upgrading || !h.upgrade);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_with_or_without_v_and_suffixes() {
        assert_eq!(Version::parse("v1.31.2"), Some(Version { major: 1, minor: 31, patch: 2 }));
        assert_eq!(Version::parse("1.30"), Some(Version { major: 1, minor: 30, patch: 0 }));
        assert_eq!(Version::parse("v1.32.0-rc.1"), Some(Version { major: 1, minor: 32, patch: 0 }));
        for bad in ["", "v", "1", "1.x.2", "1.2.3.4", "latest"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn one_minor_up_or_any_patch_is_allowed_and_the_rest_refused() {
        assert_eq!(check(None, "v1.31.0"), Ok(None));
        assert_eq!(check(Some("v1.31.0"), "v1.31.0"), Ok(None));
        let up = check(Some("v1.30.4"), "v1.31.1").unwrap().unwrap();
        assert_eq!((up.from.to_string(), up.to.to_string()), ("1.30.4".into(), "1.31.1".into()));
        assert!(check(Some("v1.31.1"), "v1.31.4").unwrap().is_some(), "a newer patch is an upgrade step too");
        let refused = |from, to| check(Some(from), to).unwrap_err();
        let patch_down = refused("v1.31.4", "v1.31.1");
        assert!(matches!(patch_down, UpgradeRefused::Downgrade { .. }), "{patch_down:?}");
        let patch_down = patch_down.to_string();
        assert!(patch_down.contains("going back a version") && patch_down.contains("rollback"), "{patch_down}");
        let two = refused("v1.29.0", "v1.31.0");
        assert!(matches!(two, UpgradeRefused::MinorJump { .. }), "{two:?}");
        let two = two.to_string();
        assert!(two.contains("one minor version at a time") && two.contains("1.30.x first"), "{two}");
        let down = refused("v1.31.0", "v1.30.9");
        assert!(matches!(down, UpgradeRefused::Downgrade { .. }) && down.to_string().contains("going back a version"));
        let major = refused("v1.31.0", "v2.0.0");
        assert!(matches!(major, UpgradeRefused::Major { .. }) && major.to_string().contains("major"));
        let banana = refused("v1.31.0", "banana");
        assert!(matches!(&banana, UpgradeRefused::NotAVersion { version } if version == "banana"));
        assert!(banana.to_string().contains("not a version"));
    }
}

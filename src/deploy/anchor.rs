//! The anchor: the control plane that ran `kubeadm init`, which every other
//! control plane and worker joins. The stdlib names it (`kubeadm.initNode`,
//! else the first control plane by name) and each switch records it with
//! its generation. Because "first by name" moves when a control plane
//! whose name sorts first is added, a switch that would move the anchor
//! without the user asking for it is refused before any node is reached:
//! the new anchor would run `kubeadm init` and start a second cluster
//! (kubespray#7962). Moving it on purpose is setting `kubeadm.initNode`.

/// Why a switch from the `recorded` anchor to the `wanted` one is refused,
/// if it is. `explicit`: the definition names its anchor
/// (`kubeadm.initNode`); `still_control_plane`: the recorded anchor is a
/// control plane of the definition.
pub fn refusal(
    recorded: Option<&str>,
    wanted: Option<&str>,
    explicit: bool,
    still_control_plane: bool,
) -> Option<String> {
    let (Some(a), Some(b)) = (recorded, wanted) else { return None };
    if a == b || explicit {
        return None;
    }
    let why = if still_control_plane {
        format!("its name sorts before {a}'s")
    } else {
        format!("{a} is no longer a control plane")
    };
    Some(format!(
        "{b} would run `kubeadm init` because {why}, but {a} ran it (the last switch recorded {a} as the first \
         control plane): {b} would start a second cluster. Set settings.kubeadm.initNode = \"{a}\" to keep {a}, \
         or name a control plane that has already joined to move the anchor on purpose"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_implicit_move_is_refused() {
        assert_eq!(refusal(None, Some("b"), false, true), None, "first switch");
        assert_eq!(refusal(Some("a"), Some("a"), false, true), None);
        assert_eq!(refusal(Some("a"), None, false, false), None, "no control plane left");
        assert_eq!(refusal(Some("a"), Some("b"), true, true), None, "asked for");
        let e = refusal(Some("cp2"), Some("cp0"), false, true).unwrap();
        assert!(e.starts_with("cp0 would run `kubeadm init` because its name sorts before cp2's"), "{e}");
        assert!(e.contains("settings.kubeadm.initNode = \"cp2\""), "{e}");
        let e = refusal(Some("cp2"), Some("cp3"), false, false).unwrap();
        assert!(e.contains("because cp2 is no longer a control plane"), "{e}");
    }
}

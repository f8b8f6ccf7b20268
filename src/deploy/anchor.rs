//! The anchor: the control plane that ran `kubeadm init`, which every other
//! control plane and worker joins. The stdlib names it (`kubeadm.initNode`,
//! else the first control plane by name) and each switch records it with
//! its generation. Because "first by name" moves when a control plane
//! whose name sorts first is added, a switch that would move the anchor
//! without the user asking for it is refused before any node is reached:
//! the new anchor would run `kubeadm init` and start a second cluster
//! (kubespray#7962). Moving it on purpose is setting `kubeadm.initNode`.

use super::error::AnchorMove;

/// Why a switch from the `recorded` anchor to the `wanted` one is refused,
/// if it is. `explicit`: the definition names its anchor
/// (`kubeadm.initNode`); `still_control_plane`: the recorded anchor is a
/// control plane of the definition; `wanted_deployed`: the wanted one is
/// in the last record (it has joined).
pub fn refusal(
    recorded: Option<&str>,
    wanted: Option<&str>,
    explicit: bool,
    still_control_plane: bool,
    wanted_deployed: bool,
) -> Option<AnchorMove> {
    let (Some(a), Some(b)) = (recorded, wanted) else { return None };
    if a == b || (explicit && wanted_deployed) {
        return None;
    }
    let (recorded, wanted) = (a.to_string(), b.to_string());
    Some(match (explicit, still_control_plane) {
        (true, _) => AnchorMove::NotJoined { recorded, wanted },
        (false, false) => AnchorMove::NoLongerControlPlane { recorded, wanted },
        (false, true) => AnchorMove::SortsFirst { recorded, wanted },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_implicit_move_is_refused() {
        assert_eq!(refusal(None, Some("b"), false, true, false), None, "first switch");
        assert_eq!(refusal(Some("a"), Some("a"), false, true, true), None);
        assert_eq!(refusal(Some("a"), None, false, false, false), None, "no control plane left");
        assert_eq!(refusal(Some("a"), Some("b"), true, true, true), None, "asked for, b has joined");
        let e = refusal(Some("a"), Some("b"), true, true, false).unwrap();
        assert!(matches!(e, AnchorMove::NotJoined { .. }), "{e:?}");
        assert!(e.to_string().contains("b has not been deployed yet"), "{e}");
        let e = refusal(Some("cp2"), Some("cp0"), false, true, false).unwrap();
        assert!(matches!(e, AnchorMove::SortsFirst { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.starts_with("cp0 would run `kubeadm init` because its name sorts before cp2's"), "{e}");
        assert!(e.contains("settings.kubeadm.initNode = \"cp2\""), "{e}");
        let e = refusal(Some("cp2"), Some("cp3"), false, false, true).unwrap();
        assert!(matches!(e, AnchorMove::NoLongerControlPlane { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("because cp2, which ran it") && e.contains("is no longer a control plane"), "{e}");
    }
}

# A Kubernetes node leaving a cluster that remains (switch --prune, reset --on; Kubespray's
# remove-node.yml): drained, then its Node object deleted, before anything of it is reset.
# A worker holds no credentials for either: its hook runs on the anchor (`delegate`). A
# control plane uses its own admin credentials. Skipped when the whole cluster is reset,
# or where there is no such node (a join that never happened, the anchor's API gone).
#
# Phases are reset last first, so these hooks go to the last phase a Kubernetes node
# has: the CNI's when there is one (with its interfaces gone, the kubelet could not tear
# a pod's sandbox down, and the drain would wait in vain), else the control-plane phase.
ctx: group:
let
  lib = import ../lib;
  inherit (lib) records text;
  plugin = ctx.settings.network.plugin;
  kubectl = "${ctx.settings.paths.binDir}/kubectl --kubeconfig=/etc/kubernetes/admin.conf";
in
rec {
  # The phase that carries the hooks.
  phase = if plugin == "none" || plugin == "cni" then "control-plane" else "cni";

  # The commands that drain node `name` and delete it, with admin credentials.
  drainAndDelete = name: [
    "${kubectl} drain ${name} --ignore-daemonsets --delete-emptydir-data --force --timeout=120s ||"
    "  echo 'kdeploy: drain failed; deleting the node anyway' >&2"
    "${kubectl} delete node ${name} --wait=false || echo 'kdeploy: could not delete the node object' >&2"
  ];

  hooks = node: text.optional group.isK8s (records.hook ({
    name = "drain-and-delete";
    when = "reset";
    run = text.lines ([ "if [ \"$KDEPLOY_RESET\" = cluster ]; then exit 0; fi" ] ++ drainAndDelete node.name);
    unless = "! ${kubectl} get node ${node.name} >/dev/null 2>&1";
  } // (if group.isControlPlane then { } else { delegate = ctx.firstControlPlane.name; })));
}

# The user's own content (settings custom.*): entries add up over cluster, roles and
# node, a node's entry replaces the role's and the cluster's of the same name (mkForce
# wins over all); own phases go right after the phase they name (siblings in name
# order, one may follow another); each phase carries its own files, units, hooks and
# checks, every node has every phase.
let
  kd = import <kdeploy>;
  c = kd.cluster {
    name = "custom";
    nodes = {
      a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
      b = { address = "10.0.0.2"; roles = [ "worker" ]; settings.custom.files."/etc/motd" = { phase = "late"; text = "node b\n"; }; };
      c = { address = "10.0.0.3"; roles = [ "worker" ]; settings.custom.files."/etc/motd" = { phase = "late"; text = "node c\n"; }; };
    };
    settings.custom = {
      phases = { late = { after = "addons"; }; early-b = { after = "preinstall"; }; early-a = { after = "preinstall"; }; after-a = { after = "early-a"; }; };
      files."/etc/motd" = { phase = "late"; text = "cluster\n"; };
      files."/etc/ca/registry.crt" = { phase = "early-a"; file = "custom.nix"; mode = "0444"; };
      units."hello.service" = { phase = "after-a"; text = "[Service]\nExecStart=/bin/true\n"; restartTriggers = [ "/etc/ca/registry.crt" ]; };
      hooks.greet = { phase = "late"; run = "echo hi"; unless = "test -e /tmp/greeted"; };
      checks.motd = { phase = "late"; run = "test -s /etc/motd"; retries = 2; delay = 1; };
    };
    roleSettings.worker.custom = {
      files."/etc/motd" = { phase = "late"; text = "worker\n"; };
      files."/etc/worker-only" = { phase = "early-b"; text = "w\n"; };
    };
  };
  mine = [ "early-a" "after-a" "early-b" "late" ];
  phase = n: p: builtins.head (builtins.filter (x: x.name == p) c.nodes.${n}.phases);
  content = n: builtins.listToAttrs (map (p: { name = p; value = { inherit (phase n p) activate files units hooks checks; }; }) mine);
in
{
  inherit (c) phaseOrder upgradePhaseOrder;
  a = content "a";
  b = content "b";
  c = content "c";
}

# Your own files, units, hooks and checks (NixOS users know them as environment.etc
# and systemd.services), in one of kdeploy's phases or in a phase of your own placed
# in the order. Each is an attribute set: a role's or a node's entry replaces the
# cluster's entry of the same name, other entries add up (NixOS's attrsOf merge).
# They are hashed, pushed, activated, rolled back and checked for drift exactly like
# the stdlib's own.
{ opt, t, ... }:
let
  phase = { type = t.plainName; };
  mode = t.strMatching "an octal mode like 0644" "0?[0-7]{3}";
  file = t.struct "a file { phase; text, file, secretFile or secretCommand; mode?; owner?; group?; }" {
    inherit phase;
    text = { type = t.nullOr (t.code "the file's content"); default = null; };
    file = { type = t.nullOr t.projectPath; default = null; };
    # a key or token: read on the deployer and sent as a secret (never stored in the
    # shared blob store, the binary cache, a diff or eval's output)
    secretFile = { type = t.nullOr t.secretPath; default = null; };
    # the same, printed by a program on the deployer (its argv; no shell)
    secretCommand = { type = t.nullOr t.argv; default = null; };
    mode = { type = mode; default = "0644"; };
    owner = { type = t.userName; default = "root"; };
    group = { type = t.userName; default = "root"; };
  };
  unit = t.struct "a unit { phase; text; onChange?; enable?; restartTriggers?; }" {
    inherit phase;
    text = { type = t.code "the unit file's text"; };
    onChange = { type = t.enum [ "restart" "reload" "none" ]; default = "restart"; };
    enable = { type = t.bool; default = true; };
    restartTriggers = { type = t.listOf t.absPath; default = [ ]; };
  };
  hook = t.struct "a hook { phase; run; when?; unless?; undo?; }" {
    inherit phase;
    run = { type = t.code "a shell command"; };
    when = { type = t.enum [ "pre" "post" "reset" ]; default = "post"; };
    unless = { type = t.nullOr (t.code "a shell command"); default = null; };
    # what `kdeploy reset` runs to undo a pre or post hook (after the phase's reset hooks)
    undo = { type = t.nullOr (t.code "a shell command"); default = null; };
  };
  check = t.struct "a check { phase; run; retries?; delay?; }" {
    inherit phase;
    run = { type = t.code "a shell command"; };
    retries = { type = t.intBetween 1 1000; default = 10; };
    delay = { type = t.intBetween 0 3600; default = 3; };
  };
  unitName = t.strMatching "a unit file name like ntp-check.service"
    "[A-Za-z0-9][-A-Za-z0-9_.:@]*\\.(service|socket|timer|path|mount|target|slice)";
in
{
  custom = {
    phases = opt {
      type = t.attrsWithNames t.plainName (t.struct "a phase { after; }" { after = { type = t.plainName; }; });
      default = { }; scope = "cluster"; merge = "attrs";
      example = { time-sync = { after = "preinstall"; }; };
      description = "Phases of your own, each placed right after a phase of kdeploy's or of yours (phases placed after the same one go in name order). Every node has every phase; an empty one costs nothing.";
    };
    files = opt {
      type = t.attrsWithNames t.absPath file; default = { }; merge = "attrs";
      example = { "/etc/chrony/chrony.conf" = { phase = "preinstall"; text = "server 10.0.0.1 iburst\n"; }; };
      description = "Files of your own, by path: `text` (inline), `file` (a path relative to the project) or `secretFile` (a key or token: a path relative to the project or absolute on the deployer, sent as a secret: never in the blob store, the binary cache, a diff or eval's output) or `secretCommand` (the same, as a program on the deployer prints it: its argv, e.g. [ \"pass\" \"show\" \"lab/etcd-key\" ], run without a shell in the project root, once per run, only with --allow-secret-commands; at most 1 MiB, 60 s), in `phase`. A plain `text` or `file` holding a private key, or a file only its owner may read under a key-like name, is refused.";
    };
    units = opt {
      type = t.attrsWithNames unitName unit; default = { }; merge = "attrs";
      example = { "node-exporter.service" = { phase = "addons"; text = "[Service]\nExecStart=/usr/local/bin/node_exporter\n"; }; };
      description = "systemd units of your own, by file name, installed in /etc/systemd/system; started when enabled, restarted (or reloaded) when their text or a restartTriggers file changes.";
    };
    hooks = opt {
      type = t.attrsWithNames t.plainName hook; default = { }; merge = "attrs";
      example = { reload-chrony = { phase = "preinstall"; run = "systemctl try-restart chrony.service"; }; };
      description = "Commands of your own (POSIX sh, as root), run before (\"pre\") or after (\"post\") `phase` switches on a node when the phase changes, unless the `unless` guard exits 0; \"reset\" hooks run when the node is reset. `undo`: what `kdeploy reset` runs to take back what a pre or post hook did to the node (after the phase's reset hooks, the last hook's first); the stdlib's own hooks all say how reset undoes them, so that a reset node is as it was before its first switch.";
    };
    checks = opt {
      type = t.attrsWithNames t.plainName check; default = { }; merge = "attrs";
      example = { node-exporter-up = { phase = "addons"; run = "systemctl is-active --quiet node-exporter.service"; }; };
      description = "Health checks of your own, run after `phase` switches until they exit 0: tried again soon at first (after 0.25 s, doubling) and then `delay` seconds apart, until the waits add up to `retries` × `delay` seconds (never fewer than `retries` + 1 tries); a check that never passes fails the switch and rolls the node back.";
    };
  };
}

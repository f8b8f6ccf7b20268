# The user's own content of one phase (settings custom.files, custom.units,
# custom.hooks, custom.checks of the node, cluster and roles merged), as closure
# records: the same shape as every stdlib phase module's.
name: group:
let
  inherit (builtins) attrNames filter map;
  lib = import ../lib;
  inherit (lib) records errors;
  c = group.settings.custom;
  inPhase = set: filter (k: set.${k}.phase == name) (attrNames set);
  fileOf = path:
    let f = c.files.${path}; in
    if builtins.length (filter (s: s != null) [ f.text f.file f.secretFile f.secretCommand ]) != 1 then
      errors.fail "node '${group.example}': custom.files.\"${path}\" needs exactly one of `text` (the content), `file` (a path in the project), `secretFile` (a key or token, sent as a secret) and `secretCommand` (a program printing one)"
    else records.file { inherit path; inherit (f) mode owner group text file secretFile secretCommand; };
in
{
  files = map fileOf (inPhase c.files);
  units = map (n: let u = c.units.${n}; in records.unit { name = n; inherit (u) text onChange enable restartTriggers; }) (inPhase c.units);
  hooks = map (n: let h = c.hooks.${n}; in records.hook { name = n; inherit (h) run when unless undo; user = true; }) (inPhase c.hooks);
  checks = map (n: let k = c.checks.${n}; in records.check { name = n; inherit (k) run retries delay; }) (inPhase c.checks);
}

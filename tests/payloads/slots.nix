# Every place a string can sit in the value of every cluster option, with `payload`
# put there: [ { option = "etcd.memberName"; path = [ "etcd" "memberName" ]; value; } ... ].
# Walks the option declarations (stdlib/options) and each type's `shape`, so a new option
# is covered without touching this file; a type without a known shape stops it.
# Used by tests/cli/shell_payloads.rs through cluster.nix.
{ payload }:
let
  options = import <kdeploy/options>;
  inherit (builtins) attrNames concatMap head isAttrs listToAttrs map concatStringsSep;

  # [ { path = [ "etcd" "memberName" ]; opt; } ... ]
  walk = prefix: tree: concatMap
    (n:
      let d = tree.${n}; p = prefix ++ [ n ]; in
      if options.eval.isOption d then [{ path = p; opt = d; }] else walk p d)
    (attrNames tree);

  # A plain value of a shape, where an option offers none to start from.
  synth = shape:
    if shape.kind == "string" || shape.kind == "json" then "x"
    else if shape.kind == "code" then "true"
    else if shape.kind == "int" then 1
    else if shape.kind == "bool" then false
    else if shape.kind == "nullOr" then synth shape.of
    else if shape.kind == "list" then [ ]
    else if shape.kind == "attrs" then { }
    else if shape.kind == "oneOf" then synth (head shape.of)
    else if shape.kind == "struct" then
      listToAttrs (map (f: { name = f; value = shape.fields.${f}.default or (synth shape.fields.${f}.shape); })
        (attrNames shape.fields))
    else throw "tests/payloads/slots.nix: unknown type shape '${shape.kind}': teach this file where its strings are";

  # Values like `v` (of `shape`) with one string (a value or an attribute name) replaced
  # by the payload; one value per such place.
  inject = shape: v:
    if shape.kind == "string" then [ payload ]
    else if shape.kind == "int" || shape.kind == "bool" then [ ]
    # the user's own command or content, run or written as written (types.nix `code`)
    else if shape.kind == "code" then [ ]
    else if shape.kind == "json" then [ payload { ${payload} = "x"; } ]
    else if shape.kind == "nullOr" then inject shape.of (if v == null then synth shape.of else v)
    else if shape.kind == "oneOf" then concatMap (s: inject s v) shape.of
    else if shape.kind == "list" then
      map (x: [ x ]) (inject shape.of (if v == [ ] then synth shape.of else head v))
    else if shape.kind == "attrs" then
      let
        k = if v == { } then "x" else head (attrNames v);
        e = if v == { } then synth shape.of else v.${k};
      in
      [ { ${payload} = e; } ] ++ map (x: { ${k} = x; }) (inject shape.of e)
    else if shape.kind == "struct" then
      let base = if isAttrs v then v else synth shape; in
      concatMap
        (f: map (x: base // { ${f} = x; }) (inject shape.fields.${f}.shape (base.${f} or (synth shape.fields.${f}.shape))))
        (attrNames shape.fields)
    else throw "tests/payloads/slots.nix: unknown type shape '${shape.kind}': teach this file where its strings are";

  # What the option's value looks like: its default, or its example when that is empty.
  start = opt:
    let d = opt.type.normalize opt.default; in
    if (d == null || d == [ ] || d == { }) && opt.example != null then opt.example else d;

  all = walk [ ] options.decl;
in
{
  options = map (o: concatStringsSep "." o.path) all;
  slots = concatMap
    (o: map (value: { option = concatStringsSep "." o.path; inherit (o) path; inherit value; })
      (inject o.opt.type.shape (start o.opt)))
    all;
}

# The option system: declaring options (mkOption), priorities (mkOverride, mkDefault,
# mkForce) and resolving the definitions of cluster, roles and node into one plain
# settings tree, with located errors for unknown options, wrong types, misplaced
# cluster-wide options and conflicting role definitions.
#
# A definition ("def") is { value; label; level; prio; pos; }:
#   label  where it comes from, for messages ("settings", "roleSettings.worker", ...)
#   level  0 cluster, 1 role, 2 node: at equal priority the higher level wins
#   prio   NixOS-style priority, lower is stronger (mkForce 50, plain 100, mkDefault 1000,
#          the option's own default 1500)
#   pos    unsafeGetAttrPos of the definition (or null)
let
  inherit (builtins) isAttrs attrNames concatMap filter map head length foldl'
    concatStringsSep elem listToAttrs toJSON;
  lib = import ../lib;
  inherit (lib) errors;
  inherit (lib.text) mapAttrs;
  fmtPos = errors.fmtPos;

  isOption = x: isAttrs x && (x._type or null) == "option";
  isOverride = x: isAttrs x && (x._type or null) == "override";

  plainPriority = 100;
  optionDefaultPriority = 1500;

  join = concatStringsSep ".";

  unwrap = def:
    if isOverride def.value then unwrap (def // { value = def.value.content; prio = def.value.priority; })
    else def;

  # The definitions of `name` inside each def (positions taken from the parent attrset).
  descend = defs: name:
    concatMap
      (def:
        if def.value ? ${name}
        then [ (def // { value = def.value.${name}; pos = builtins.unsafeGetAttrPos name def.value; }) ]
        else [ ])
      defs;

  # A def reaching a group of options: unwrap, then require an attrset of known names.
  checkGroup = decl: path: def0:
    let
      def = unwrap def0;
      v = def.value;
      here = if path == [ ] then "" else "'${join path}' ";
      unknown = filter (k: !(decl ? ${k})) (attrNames v);
      bad = head unknown;
      badPath = join (path ++ [ bad ]);
    in
    if !(isAttrs v) then
      errors.fail "${here}in ${def.label} (${fmtPos def.pos}) is a group of options: expected an attribute set, got ${(import ./types.nix).describeValue v}"
    else if unknown != [ ] then
      let
        sugg = errors.closest bad (attrNames decl);
        names = attrNames decl;
        listed = if length names > 15 then concatStringsSep ", " (lib.text.take 15 names) + ", ..." else concatStringsSep ", " names;
        prefix = if path == [ ] then "" else join path + ".";
      in
      errors.fail ("unknown option '${badPath}' in ${def.label} (${errors.where bad v})."
        + (if sugg != null then " Did you mean '${prefix}${sugg}'?" else " Options${if path == [ ] then "" else " in '${join path}'"}: ${listed}."))
    else def;

  resolveLeaf = opt: path: defs0:
    let
      name = join path;
      defs = map
        (d0:
          let
            d = unwrap d0;
            m = opt.type.verify d.value;
          in
          if m != null then errors.fail "option '${name}' in ${d.label} (${fmtPos d.pos}): ${m}"
          else if opt.scope == "cluster" && d.level > 0 then
            errors.fail "option '${name}' is cluster-wide and cannot be set in ${d.label} (${fmtPos d.pos}); set it in `settings`."
          else d)
        defs0;
      best = foldl' (a: d: if d.prio < a then d.prio else a) optionDefaultPriority defs;
      top = filter (d: d.prio == best) defs;
      topLevel = foldl' (a: d: if d.level > a then d.level else a) (-1) top;
      winners = filter (d: d.level == topLevel) top;
      w = head (builtins.sort (a: b: builtins.lessThan a.label b.label) winners);
      conflicting = filter (d: d.value != w.value) winners;
      c = head (builtins.sort (a: b: builtins.lessThan a.label b.label) conflicting);
    in
    if opt.merge == "attrs" then mergeAttrs opt defs
    else if defs == [ ] || top == [ ] then opt.type.normalize opt.default
    else if conflicting != [ ] then
      errors.fail "option '${name}' has conflicting definitions of equal priority: ${w.label} (${fmtPos w.pos}) sets ${toJSON w.value}, ${c.label} (${fmtPos c.pos}) sets ${toJSON c.value}. Set it on the node or use kd.mkForce."
    else opt.type.normalize w.value;

  # An attrsOf option merged NixOS-style: entries add up over cluster, roles and node;
  # for one name the strongest definition wins (lower priority value, then the
  # higher level; between two roles, the later label).
  mergeAttrs = opt: defs:
    let
      weaker = a: b: a.prio > b.prio || (a.prio == b.prio && (a.level < b.level || (a.level == b.level && builtins.lessThan a.label b.label)));
      ordered = builtins.sort weaker defs;
    in
    opt.type.normalize (foldl' (acc: d: acc // d.value) opt.default ordered);

  # Resolve a group. `defs`: every def reaching it (already checked); `fresh`: the ones
  # `base` (the resolution without them) has not seen. Groups no fresh def touches are
  # shared with `base`, so a node only pays for the options it actually sets.
  resolveGroup = decl: path: defs: fresh: base:
    mapAttrs
      (name: d:
        let freshSub = descend fresh name; in
        if freshSub == [ ] then base.${name}
        else
          let
            p = path ++ [ name ];
            allSub = descend defs name;
          in
          if isOption d then resolveLeaf d p allSub
          else
            let checkedFresh = map (checkGroup d p) freshSub;
            in
            # already-seen defs were checked when they were fresh
            resolveGroup d p (map unwrap allSub) checkedFresh base.${name})
      decl;
in
rec {
  inherit isOption isOverride plainPriority optionDefaultPriority;

  # merge = "attrs": an attribute set whose entries add up over the levels
  # (see mergeAttrs); "replace": the strongest definition is the value.
  mkOption = { type, default, description, scope ? "node", example ? null, kubespray ? null, merge ? "replace" }:
    { _type = "option"; inherit type default description scope example kubespray merge; };

  mkOverride = priority: content: { _type = "override"; inherit priority content; };
  mkDefault = mkOverride 1000;
  mkForce = mkOverride 50;

  # The tree of option defaults (normalized).
  defaults = decl: mapAttrs (_: d: if isOption d then d.type.normalize d.default else defaults d) decl;

  # Every option as plain data, for `kd.options` / `kdeploy options`.
  list = decl:
    let
      go = prefix: tree: concatMap
        (name:
          let d = tree.${name}; p = prefix ++ [ name ]; in
          if isOption d then [{
            path = join p;
            type = d.type.name;
            values = d.type.values;
            default = d.type.normalize d.default;
            inherit (d) description scope example kubespray;
          }]
          else go p d)
        (attrNames tree);
    in
    go [ ] decl;

  # A top-level definition. `value` is the user's attrset of settings.
  mkDef = { value, label, level, pos }: { inherit value label level pos; prio = plainPriority; };

  # Resolve `fresh` definitions on top of `base` (a resolved tree that already accounts
  # for `seen`). With seen = [] and base = defaults decl this is a full resolution.
  resolve = { decl, seen ? [ ], fresh, base }:
    let checked = map (checkGroup decl [ ]) fresh;
    in resolveGroup decl [ ] (seen ++ checked) checked base;
}

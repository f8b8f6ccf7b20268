# A miniature NixOS-style module system written with builtins only (no
# nixpkgs lib). It follows the real one's shape: modules are functions of
# { config, lib, ... } (config is the lazy fixpoint of the final result) that
# return { imports, options, config }; option declarations are merged
# recursively; definitions are pushed down through mkIf / mkMerge /
# mkOverride wrappers (so conditions that read config do not force the whole
# tree), discharged at each option, filtered by priority (mkForce 50 <
# normal 100 < mkDefault 1000 < option default 1500), type-checked and merged
# per type (lists concatenate, attribute sets merge per name, scalars must
# agree, lines join). Definitions of undeclared options are errors.
let
  inherit (builtins)
    all attrNames concatMap concatStringsSep filter foldl' hasAttr head
    isAttrs isBool isFunction isInt isList isString length map mapAttrs
    tail toJSON zipAttrsWith;

  typeOf' = v: if isAttrs v then v._type or null else null;

  mkOverride = priority: content: { _type = "override"; inherit priority content; };
  mkOptionDefault = mkOverride 1500;
  mkDefault = mkOverride 1000;
  mkForce = mkOverride 50;
  mkIf = condition: content: { _type = "if"; inherit condition content; };
  mkMerge = contents: { _type = "merge"; inherit contents; };
  mkOption = attrs: attrs // { _type = "option"; };
  isOption = v: typeOf' v == "option";

  showLoc = loc: concatStringsSep "." loc;

  mergeEqual = loc: defs:
    let first = head defs; in
    if all (d: d.value == first.value) (tail defs) then first.value
    else throw "The option `${showLoc loc}' has conflicting definitions, in ${concatStringsSep " and " (map (d: d.file) defs)}";

  types = rec {
    int = { name = "int"; check = isInt; merge = mergeEqual; };
    str = { name = "str"; check = isString; merge = mergeEqual; };
    bool = { name = "bool"; check = isBool; merge = mergeEqual; };
    lines = {
      name = "lines";
      check = isString;
      merge = loc: defs: concatStringsSep "\n" (map (d: d.value) defs);
    };
    listOf = elemType: {
      name = "listOf ${elemType.name}";
      check = v: isList v && all elemType.check v;
      merge = loc: defs: concatMap (d: d.value) defs;
    };
    attrsOf = elemType: {
      name = "attrsOf ${elemType.name}";
      check = v: isAttrs v && all elemType.check (builtins.attrValues v);
      merge = loc: defs:
        mapAttrs (name: elemType.merge (loc ++ [ name ]))
          (zipAttrsWith (name: defs': defs')
            (map (d: mapAttrs (_: value: { inherit (d) file; inherit value; }) d.value) defs));
    };
  };

  # Turn one definition value into a list of plain attribute sets, pushing
  # mkIf / mkOverride into each attribute without forcing the condition.
  pushDown = v:
    let t = typeOf' v; in
    if t == "merge" then concatMap pushDown v.contents
    else if t == "if" then map (mapAttrs (_: mkIf v.condition)) (pushDown v.content)
    else if t == "override" then map (mapAttrs (_: mkOverride v.priority)) (pushDown v.content)
    else [ v ];

  # At an option: resolve mkIf / mkMerge, keeping overrides.
  discharge = v:
    let t = typeOf' v; in
    if t == "merge" then concatMap discharge v.contents
    else if t == "if" then (if v.condition then discharge v.content else [ ])
    else if t == "override" then map (mkOverride v.priority) (discharge v.content)
    else [ v ];

  mergeOption = loc: opt: defs:
    let
      discharged = concatMap (d: map (value: { inherit (d) file; inherit value; }) (discharge d.value)) defs;
      withDefault = discharged ++ (if opt ? default then [ { file = "default"; value = mkOptionDefault opt.default; } ] else [ ]);
      prioritised = map (d:
        if typeOf' d.value == "override"
        then { inherit (d) file; priority = d.value.priority; value = d.value.content; }
        else { inherit (d) file; priority = 100; inherit (d) value; }) withDefault;
      best = foldl' (p: d: if d.priority < p then d.priority else p) 9999 prioritised;
      winners = filter (d: d.priority == best) prioritised;
      checked = map (d:
        if opt.type.check d.value then d
        else throw "The option `${showLoc loc}' in ${d.file} is not of type ${opt.type.name}") winners;
    in
    if winners == [ ] then throw "The option `${showLoc loc}' is used but not defined"
    else opt.type.merge loc checked;

  # Evaluate a tree of option declarations against a list of definitions
  # ({ file, value } with value an attribute set at this level).
  evalOptions = loc: decls: defs:
    let
      plain = concatMap (d: map (value: { inherit (d) file; inherit value; }) (pushDown d.value)) defs;
      undeclared = concatMap (d: filter (n: !(hasAttr n decls)) (attrNames d.value)) plain;
      at = name: concatMap (d: if hasAttr name d.value then [ { inherit (d) file; value = d.value.${name}; } ] else [ ]) plain;
    in
    if undeclared != [ ] then throw "The option `${showLoc (loc ++ [ (head undeclared) ])}' does not exist"
    else mapAttrs (name: decl:
      if isOption decl then mergeOption (loc ++ [ name ]) decl (at name)
      else evalOptions (loc ++ [ name ]) decl (at name)) decls;

  mergeDecls = loc: decls:
    zipAttrsWith (name: vs:
      if all isOption vs then
        (if length vs == 1 then head vs
         else throw "The option `${showLoc (loc ++ [ name ])}' is declared more than once")
      else if all (v: !(isOption v)) vs then mergeDecls (loc ++ [ name ]) vs
      else throw "The option `${showLoc (loc ++ [ name ])}' is declared both as an option and as a set of options") decls;

  evalModules = { modules, specialArgs ? { } }:
    let
      args = { inherit config lib; } // specialArgs;
      # Apply every module, following imports depth-first.
      collect = prefix: ms:
        concatMap (i:
          let
            m = builtins.elemAt ms i;
            file = "${prefix}${toString i}";
            v = if isFunction m then m args else m;
          in
          [ { inherit file; options = v.options or { }; config = v.config or { }; } ]
          ++ collect "${file}." (v.imports or [ ]))
          (builtins.genList (i: i) (length ms));
      applied = collect "module-" modules;
      options = mergeDecls [ ] (map (m: m.options) applied);
      config = evalOptions [ ] options (map (m: { inherit (m) file; value = m.config; }) applied);
    in
    { inherit options config; };

  lib = {
    inherit mkOverride mkOptionDefault mkDefault mkForce mkIf mkMerge mkOption types evalModules;
  };
in
lib

# A small, deterministic YAML writer for plain data (attrsets, lists, strings, ints,
# floats, bools, null). Keys come out sorted (Nix attrset order); strings are written
# double-quoted (JSON escaping is valid YAML) unless multi-line, which use block literals.
# `toYAML` renders one document; `documents` joins several with "---".
let
  inherit (builtins) attrNames concatStringsSep isAttrs isList isString isBool isInt isFloat
    length map match toJSON replaceStrings stringLength substring filter foldl' lessThan;
  text = import ./text.nix;

  plainKey = k:
    match "[A-Za-z_][A-Za-z0-9_./-]*" k != null
    && !(builtins.elem k [ "true" "false" "null" "yes" "no" "on" "off" "y" "n" "~" ]);
  key = k: if plainKey k then k else toJSON k;

  isMultiline = s: match ".*\n.*" s != null;

  scalar = v:
    if v == null then "null"
    else if isBool v then text.boolStr v
    else if isInt v || isFloat v then toJSON v
    else toJSON v;

  # Block literal for a multi-line string; its content is indented by `ind` spaces.
  block = ind: s:
    let
      endsNl = text.hasSuffix "\n" s;
      chomp = if endsNl then (if text.hasSuffix "\n\n" s then "+" else "") else "-";
      body = text.indent ind (if endsNl then s else s + "\n");
    in
    "|" + chomp + "\n" + body;

  isEmptyColl = v: (isAttrs v && v == { }) || (isList v && v == [ ]);

  # Render value `v` that follows "key:" at indentation `ind`.
  # Returns the text starting right after the colon (including leading space / newline).
  afterKey = ind: v:
    if isAttrs v && v != { } then "\n" + attrs ind v
    else if isList v && v != [ ] then "\n" + list ind v
    else if isAttrs v then " {}\n"
    else if isList v then " []\n"
    else if isString v && isMultiline v then " " + block ind v
    else " " + scalar v + "\n";

  attrs = ind: a:
    concatStringsSep "" (map (k: text.spaces ind + key k + ":" + afterKey (ind + 2) a.${k}) (attrNames a));

  # Lists of maps use the compact "- key: v" form; nested collections are indented by 2.
  list = ind: l:
    concatStringsSep "" (map (item: text.spaces ind + "-" + listItem ind item) l);

  listItem = ind: v:
    if isAttrs v && v != { } then
      let rendered = attrs (ind + 2) v; in
      " " + substring (ind + 2) (stringLength rendered) rendered
    else if isList v && v != [ ] then "\n" + list (ind + 2) v
    else if isAttrs v then " {}\n"
    else if isList v then " []\n"
    else if isString v && isMultiline v then " " + block (ind + 2) v
    else " " + scalar v + "\n";

  toYAML = v:
    if isAttrs v then (if v == { } then "{}\n" else attrs 0 v)
    else if isList v then (if v == [ ] then "[]\n" else list 0 v)
    else if isString v && isMultiline v then block 2 v
    else scalar v + "\n";
  # One top-level entry, as `attrs 0` renders it.
  entry = a: k: { inherit k; text = key k + ":" + afterKey 2 a.${k}; };
in
{
  inherit toYAML;

  # `withShared shared own` is `toYAML (shared // own)` for non-empty sets, where
  # `shared` is the same for many callers (a kubelet configuration of a thousand
  # nodes, all but their address): applied to `shared` alone it renders shared's
  # entries once; applied then to each `own` (a few entries), it splices those in at
  # their sorted places. The text is the same as toYAML's, since toYAML writes the
  # entries of a set one after the other in name order.
  withShared = shared:
    let common = map (entry shared) (attrNames shared); in
    own:
    let
      kept = filter (e: !(own ? ${e.k})) common;
      insert = acc: e: filter (x: lessThan x.k e.k) acc ++ [ e ] ++ filter (x: lessThan e.k x.k) acc;
    in
    concatStringsSep "" (map (e: e.text) (foldl' insert kept (map (entry own) (attrNames own))));

  # Several documents, each introduced by "---".
  documents = docs: concatStringsSep "" (map (d: "---\n" + toYAML d) docs);
}

# Error helpers: `FILE:LINE:COL` formatting of builtins.unsafeGetAttrPos results,
# "did you mean" suggestions (edit distance + prefix match), and the one `fail`
# every user-facing error goes through (so all messages start with "kdeploy: ").
let
  inherit (builtins) elemAt foldl' genList length stringLength substring sort lessThan filter head map toString;
  text = import ./text.nix;

  min3 = a: b: c: let m = if a < b then a else b; in if m < c then m else c;

  # Classic Levenshtein distance; O(|a|*|b|), used only on error paths.
  distance = a: b:
    let
      la = stringLength a;
      lb = stringLength b;
      ca = i: substring i 1 a;
      cb = j: substring j 1 b;
      firstRow = genList (j: j) (lb + 1);
      step = prev: i:
        foldl'
          (row: j:
            row ++ [
              (min3
                (elemAt prev (j + 1) + 1)
                (elemAt row j + 1)
                (elemAt prev j + (if ca i == cb j then 0 else 1)))
            ])
          [ (i + 1) ]
          (genList (j: j) lb);
      lastRow = foldl' step firstRow (genList (i: i) la);
    in
    elemAt lastRow lb;
in
rec {
  inherit distance;

  # { file; line; column; } or null -> "FILE:LINE:COL"
  fmtPos = pos:
    if pos == null then "<unknown location>"
    else "${toString pos.file}:${toString pos.line}:${toString pos.column}";

  posOf = name: attrs: builtins.unsafeGetAttrPos name attrs;

  # Position of the attribute at `path` (e.g. [ "network" "podCIDR" ]) in `set`,
  # looking through kd.mkForce/mkDefault wrappers; null when it is not there.
  posIn = set: path:
    let
      unwrap = v: if builtins.isAttrs v && (v._type or null) == "override" then unwrap v.content else v;
      go = v: p:
        let v' = unwrap v; in
        if !(builtins.isAttrs v') || !(v' ? ${head p}) then null
        else if length p == 1 then builtins.unsafeGetAttrPos (head p) v'
        else go v'.${head p} (builtins.tail p);
    in
    go set path;
  where = name: attrs: fmtPos (posOf name attrs);

  # Best candidate for a mistyped `name`, or null.
  closest = name: candidates:
    let
      scored = map (c: { inherit c; d = distance name c; }) candidates;
      limit = if stringLength name < 4 then 1 else if stringLength name < 9 then 2 else 3;
      near = filter (s: s.d <= limit) scored;
      prefixed = filter (c: stringLength name >= 3 && (text.hasPrefix name c || text.hasPrefix c name)) candidates;
      best = sort (x: y: lessThan x.d y.d || (x.d == y.d && lessThan x.c y.c)) near;
    in
    if best != [ ] then (head best).c
    else if prefixed != [ ] then head (sort lessThan prefixed)
    else null;

  # " Did you mean 'x'?" or "".
  didYouMean = name: candidates:
    let c = closest name candidates; in
    if c == null then "" else " Did you mean '${c}'?";

  fail = msg: throw "kdeploy: ${msg}";
}

# Text helpers: lines, indentation, optional pieces, shell quoting, env files.
# Pure string functions only; nothing here knows about Kubernetes.
let
  inherit (builtins) concatStringsSep filter isString length map replaceStrings split stringLength substring genList foldl';
in
rec {
  # [ "a" "b" ] -> "a\nb\n"   (every line terminated, empty list -> "")
  lines = ls: concatStringsSep "" (map (l: l + "\n") ls);

  # Split a text into lines (a trailing newline does not make an extra empty line).
  splitLines = text:
    let
      parts = filter isString (split "\n" text);
      n = length parts;
    in
    if n > 0 && builtins.elemAt parts (n - 1) == "" then genList (i: builtins.elemAt parts i) (n - 1) else parts;

  # Prefix every non-empty line of `text` with `n` spaces; keeps the final newline state.
  indent = n: text:
    let
      pad = spaces n;
      ls = splitLines text;
      body = concatStringsSep "\n" (map (l: if l == "" then "" else pad + l) ls);
      endsNl = stringLength text > 0 && substring (stringLength text - 1) 1 text == "\n";
    in
    body + (if endsNl then "\n" else "");

  spaces = n: concatStringsSep "" (genList (_: " ") n);

  optional = cond: x: if cond then [ x ] else [ ];
  optionals = cond: xs: if cond then xs else [ ];
  optionalString = cond: s: if cond then s else "";

  boolStr = b: if b then "true" else "false";

  # Anything printable -> string (bools as true/false, null as "").
  str = v:
    if v == null then ""
    else if builtins.isBool v then boolStr v
    else toString v;

  # Single-quote a word for POSIX sh.
  shQuote = s: "'" + replaceStrings [ "'" ] [ "'\\''" ] s + "'";

  # Escape text for an unquoted sh here-document (so $, ` and \ stay literal).
  heredocEscape = replaceStrings [ "\\" "$" "`" ] [ "\\\\" "\\$" "\\`" ];

  # KEY=value lines from a list of { name; value; } (order kept), values printed with `str`.
  envLines = pairs: lines (map (p: "${p.name}=${str p.value}") pairs);

  take = n: l: genList (i: builtins.elemAt l i) (if n < length l then n else length l);

  hasPrefix = pre: s: substring 0 (stringLength pre) s == pre;
  hasSuffix = suf: s:
    let ls = stringLength s; lf = stringLength suf; in
    ls >= lf && substring (ls - lf) lf s == suf;

  # Remove duplicates keeping first occurrences (O(n^2); use for short lists only).
  unique = foldl' (acc: x: if builtins.elem x acc then acc else acc ++ [ x ]) [ ];

  # builtins.mapAttrs is not in kdeploy's builtin set; this is the same with listToAttrs.
  mapAttrs = f: set: builtins.listToAttrs (map (n: { name = n; value = f n set.${n}; }) (builtins.attrNames set));

  # "a.b.c" -> [ "a" "b" "c" ]
  splitOn = sep: s: filter isString (split (replaceStrings [ "." ] [ "\\." ] sep) s);
}

# Option types. A type is plain data plus two functions:
#   name      : how `kd.options` and errors describe it ("integer", "list of string", ...)
#   verify v  : null when v is acceptable, else a sentence saying what is wrong
#   normalize : turns an accepted value into its output form (paths -> strings, defaults
#               filled into structs); identity for most types
#   values    : the allowed values of an enum (null for other types)
let
  inherit (builtins) isString isInt isBool isAttrs isList isPath isFunction isFloat typeOf
    concatStringsSep attrNames filter length head map genList elemAt toJSON match;
  mapAttrs = (import ../lib/text.nix).mapAttrs;
  lib = import ../lib;
  inherit (lib) errors ip;

  describeValue = v:
    if isString v then "the string ${toJSON v}"
    else if isInt v then "the integer ${toString v}"
    else if isBool v then "the boolean ${lib.text.boolStr v}"
    else if v == null then "null"
    else if isList v then "a list"
    else if isAttrs v then "an attribute set"
    else if isFunction v then "a function"
    else if isPath v then "the path ${toString v}"
    else "a ${typeOf v}";

  mk = { name, verify, normalize ? (v: v), values ? null }: { inherit name verify normalize values; };

  simple = name: pred: mk {
    inherit name;
    verify = v: if pred v then null else "expected ${name}, got ${describeValue v}";
  };

  # First non-null message of a list of (lazy) messages.
  firstError = msgs: let bad = filter (m: m != null) msgs; in if bad == [ ] then null else head bad;
in
rec {
  inherit describeValue;

  str = simple "a string" isString;
  int = simple "an integer" isInt;
  bool = simple "a boolean" isBool;
  number = simple "a number" (v: isInt v || isFloat v);

  intBetween = lo: hi: mk {
    name = "an integer from ${toString lo} to ${toString hi}";
    verify = v:
      if !(isInt v) then "expected an integer from ${toString lo} to ${toString hi}, got ${describeValue v}"
      else if v < lo || v > hi then "${toString v} is out of range (${toString lo}..${toString hi})"
      else null;
  };

  port = intBetween 1 65535 // { name = "a port number (1..65535)"; };
  prefixLength = intBetween 0 32 // { name = "an IPv4 prefix length (0..32)"; };

  # String matching a regular expression (`what` names it in messages).
  strMatching = what: re: mk {
    name = what;
    verify = v:
      if !(isString v) then "expected ${what}, got ${describeValue v}"
      else if match re v == null then "${toJSON v} is not ${what}"
      else null;
  };

  absPath = strMatching "an absolute path" "/.*";

  # A file on the deployer: a string, or a Nix path (turned into its string form; never
  # copied to the store).
  deployerPath = mk {
    name = "a path on the deployer (string or path)";
    verify = v: if isString v || isPath v then null else "expected a path (string or path), got ${describeValue v}";
    normalize = v: toString v;
  };

  ipv4 = mk {
    name = "an IPv4 address";
    verify = v:
      if !(isString v) then "expected an IPv4 address, got ${describeValue v}"
      else if ip.parse v == null then "${toJSON v} is not an IPv4 address"
      else null;
  };

  cidr = mk {
    name = "an IPv4 CIDR block";
    verify = v:
      let c = if isString v then ip.parseCidr v else null; in
      if !(isString v) then "expected an IPv4 CIDR block like \"10.233.64.0/18\", got ${describeValue v}"
      else if c == null then "${toJSON v} is not an IPv4 CIDR block like \"10.233.64.0/18\""
      else if !c.aligned then "${toJSON v} has host bits set; the network is ${c.network}"
      else null;
  };

  enum = vals: mk {
    name = "one of ${concatStringsSep ", " (map toJSON vals)}";
    values = vals;
    verify = v:
      if builtins.elem v vals then null
      else if isString v then
        "unknown value ${toJSON v} (expected one of: ${concatStringsSep ", " vals}).${errors.didYouMean v vals}"
      else "expected one of ${concatStringsSep ", " (map toJSON vals)}, got ${describeValue v}";
  };

  nullOr = t: mk {
    name = "null or ${t.name}";
    verify = v: if v == null then null else t.verify v;
    normalize = v: if v == null then null else t.normalize v;
    values = t.values;
  };

  listOf = t: mk {
    name = "a list of ${t.name}";
    verify = v:
      if !(isList v) then "expected a list of ${t.name}, got ${describeValue v}"
      else firstError (genList (i: let m = t.verify (elemAt v i); in if m == null then null else "element ${toString (i + 1)}: ${m}") (length v));
    normalize = map t.normalize;
  };

  attrsOf = t: mk {
    name = "an attribute set of ${t.name}";
    verify = v:
      if !(isAttrs v) then "expected an attribute set of ${t.name}, got ${describeValue v}"
      else firstError (map (k: let m = t.verify v.${k}; in if m == null then null else "attribute '${k}': ${m}") (attrNames v));
    normalize = mapAttrs (_: t.normalize);
  };

  oneOf = ts: mk {
    name = concatStringsSep " or " (map (t: t.name) ts);
    verify = v:
      if builtins.any (t: t.verify v == null) ts then null
      else "expected ${concatStringsSep " or " (map (t: t.name) ts)}, got ${describeValue v}";
    normalize = v: let ok = filter (t: t.verify v == null) ts; in (head ok).normalize v;
  };

  # Free-form JSON-like data (strings, numbers, bools, null, lists, attrsets).
  json = mk {
    name = "JSON-like data";
    verify = let
      go = v:
        if isFunction v then "functions are not allowed here"
        else if isPath v then "paths are not allowed here (use a string)"
        else if isList v then firstError (map go v)
        else if isAttrs v then firstError (map (k: go v.${k}) (attrNames v))
        else null;
    in go;
  };

  # A record with known fields: fields = { name = { type; default? }; } (no default =
  # required). Unknown fields are rejected with a suggestion.
  struct = what: fields: mk {
    name = what;
    verify = v:
      if !(isAttrs v) then "expected ${what}, got ${describeValue v}"
      else
        let
          known = attrNames fields;
          unknown = filter (k: !(fields ? ${k})) (attrNames v);
          missing = filter (k: !(fields.${k} ? default) && !(v ? ${k})) known;
        in
        if unknown != [ ] then
          "unknown field '${head unknown}' in ${what} (fields: ${concatStringsSep ", " known}).${errors.didYouMean (head unknown) known}"
        else if missing != [ ] then "${what} needs the field '${head missing}'"
        else firstError (map (k: if v ? ${k} then (let m = fields.${k}.type.verify v.${k}; in if m == null then null else "field '${k}': ${m}") else null) known);
    normalize = v: mapAttrs (k: f: if v ? ${k} then f.type.normalize v.${k} else f.default) fields;
  };
}

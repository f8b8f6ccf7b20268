# Option types. A type is plain data plus two functions:
#   name      : how `kd.options` and errors describe it ("integer", "list of string", ...)
#   verify v  : null when v is acceptable, else a sentence saying what is wrong
#   normalize : turns an accepted value into its output form (paths -> strings, defaults
#               filled into structs); identity for most types
#   values    : the allowed values of an enum (null for other types)
#   shape     : the type's structure as data ({ kind = "string"; }, { kind = "list"; of; },
#               ...), so tools and tests can walk every string an option holds
#               (tests/cli/shell_payloads.rs feeds shell syntax to each of them)
#
# Values that reach a node's shell, a unit file or an env file sourced by sh (paths, names,
# hosts, versions, durations, flags, env values) have types whose characters exclude shell
# syntax, quotes, whitespace and control characters; free text (extraConfig, extra YAML
# args) only ever lands in YAML/TOML written with escaping, and the few values a script
# must quote go through lib.text.shQuote.
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

  mk = { name, verify, normalize ? (v: v), values ? null, shape }: { inherit name verify normalize values shape; };

  simple = name: kind: pred: mk {
    inherit name;
    shape = { inherit kind; };
    verify = v: if pred v then null else "expected ${name}, got ${describeValue v}";
  };

  # Where kdeploy never puts or points anything on a node (its own state directory, the
  # kernel's file systems), and the system directories a data directory may not be; the
  # engine (src/closure/validate.rs) refuses the same for every managed path.
  forbiddenRoots = [ "/var/lib/kdeploy" "/proc" "/sys" "/dev" ];
  systemDirs = [
    "/" "/bin" "/boot" "/etc" "/etc/default" "/etc/modprobe.d" "/etc/modules-load.d" "/etc/ssl"
    "/etc/sysctl.d" "/etc/systemd" "/etc/systemd/system" "/home" "/lib" "/lib32" "/lib64"
    "/media" "/mnt" "/opt" "/root" "/run" "/sbin" "/srv" "/tmp" "/usr" "/usr/bin" "/usr/include"
    "/usr/lib" "/usr/lib64" "/usr/libexec" "/usr/local" "/usr/local/bin" "/usr/local/lib"
    "/usr/local/sbin" "/usr/local/share" "/usr/sbin" "/usr/share" "/usr/src" "/var" "/var/cache"
    "/var/lib" "/var/log" "/var/opt" "/var/spool" "/var/tmp"
  ];
  below = root: p: p == root || lib.text.hasPrefix "${root}/" p;

  hostRe = "[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*";
  ipv6Re = "[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*";
  durationRe = "([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+";

  # First non-null message of a list of (lazy) messages.
  firstError = msgs: let bad = filter (m: m != null) msgs; in if bad == [ ] then null else head bad;
in
rec {
  inherit describeValue;

  inherit forbiddenRoots systemDirs;

  str = simple "a string" "string" isString;
  int = simple "an integer" "int" isInt;
  bool = simple "a boolean" "bool" isBool;
  number = simple "a number" "int" (v: isInt v || isFloat v);

  intBetween = lo: hi: mk {
    name = "an integer from ${toString lo} to ${toString hi}";
    shape = { kind = "int"; };
    verify = v:
      if !(isInt v) then "expected an integer from ${toString lo} to ${toString hi}, got ${describeValue v}"
      else if v < lo || v > hi then "${toString v} is out of range (${toString lo}..${toString hi})"
      else null;
  };

  port = intBetween 1 65535 // { name = "a port number (1..65535)"; };

  # A rollout batch: a number of nodes, or a percentage of them (rounded up).
  serial = oneOf [ (intBetween 1 100000) (strMatching "a percentage from 1% to 100%" "(100|[1-9][0-9]?)%") ];
  prefixLength = intBetween 0 32 // { name = "an IPv4 prefix length (0..32)"; };

  # String matching a regular expression (`what` names it in messages).
  strMatching = what: re: mk {
    name = what;
    shape = { kind = "string"; };
    verify = v:
      if !(isString v) then "expected ${what}, got ${describeValue v}"
      else if match re v == null then "${toJSON v} is not ${what}"
      else null;
  };

  # strMatching plus a further check (`more v`: null or what is wrong).
  strChecked = what: re: more: let t = strMatching what re; in t // {
    verify = v: let m = t.verify v; in if m != null then m else more v;
  };

  # One line of text: no newline or other control character (it may not start a new line
  # in the file it lands in).
  line = strMatching "a line of text (no newline or other control character)" "[^[:cntrl:]]*";

  # A path on a node: absolute, normalised, of characters no shell, unit file or env file
  # reads specially; never in kdeploy's state directory, /proc, /sys or /dev.
  absPath = strChecked
    "an absolute path of letters, digits and . _ + @ - (no //, . or .. components, no spaces, quotes or shell syntax)"
    "(/[-A-Za-z0-9._+@]+)+"
    (v:
      let root = builtins.filter (r: below r v) forbiddenRoots; in
      if match "(.*/)?[.][.]?(/.*)?" v != null then "${toJSON v} is not normalised (no . or .. components)"
      else if root != [ ] then "${toJSON v} lies in ${head root}, which kdeploy never manages"
      else null);

  # A directory a service keeps its data in (made 0700, owned by the service): an
  # absolute path that is not a system directory such as /etc, /usr or /var/lib.
  dataDir = absPath // {
    name = "a data directory (an absolute path, not a system directory such as /etc or /var/lib)";
    verify = v:
      let m = absPath.verify v; in
      if m != null then m
      else if builtins.elem v systemDirs then "${toJSON v} is a system directory; give the service a directory of its own (such as /var/lib/<service>)"
      else null;
  };

  # A plain name: a member, runtime or snapshotter name, an interface.
  plainName = strMatching "a name of letters, digits and . _ - (starting with a letter or digit)" "[A-Za-z0-9][-A-Za-z0-9._]*";
  # A DNS name or an IPv4 address.
  host = strChecked "a host name or IPv4 address" hostRe
    (v: if builtins.stringLength v > 253 then "${toJSON v} is longer than 253 characters" else null);
  # An IPv4 or IPv6 address (for bind addresses such as "::").
  ipAddress = strChecked "an IPv4 or IPv6 address" "[0-9.]+|${ipv6Re}"
    (v: if match "[0-9.]+" v != null && ip.parse v == null then "${toJSON v} is not an IPv4 address" else null);
  # A certificate subject alternative name: a host, *.domain or an IP address.
  san = strMatching "a host name, *.domain or IP address" "(\\*\\.)?${hostRe}|${ipv6Re}";
  domain = strMatching "a DNS domain" "[a-z0-9]([-a-z0-9.]*[a-z0-9])?";
  imageTag = strMatching "an image tag like v1.12.1 or 3.10 (letters, digits and . _ -)" "[A-Za-z0-9_][-A-Za-z0-9._]{0,127}";
  version = strMatching "a version like 1.33.5" "[0-9]+(\\.[0-9]+)*([-+][0-9A-Za-z.]+)?";
  duration = strMatching "a duration like 10s, 5m0s or 1h" durationRe;
  sha256 = strMatching "a checksum like sha256:<64 lowercase hex digits>" "sha256:[0-9a-f]{64}";
  # etcd's auto-compaction retention: hours, or a duration.
  retention = strMatching "a number of hours (like 8) or a duration (like 30m)" "[0-9]+|${durationRe}";
  quantity = strMatching "a quantity like 256Mi, 500M or 100m"
    "[0-9]+(\\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?";
  # An http(s) URL: host (or [IPv6]), optional user and port, a plain path.
  url = strMatching "an http(s) URL like https://host[:port][/path] (no spaces, quotes, % or shell syntax)"
    "https?://([-A-Za-z0-9._+]+(:[-A-Za-z0-9._+]*)?@)?(${hostRe}|[[][0-9A-Fa-f:.]+[]])(:[0-9]+)?(/[-A-Za-z0-9._+@/=,]*)?";
  # An http(s) URL handed to the nodes (the binary cache): no user:password@, which
  # would sit in every node's process list; the value is not echoed (it may hold one).
  nodeUrl = strChecked "an http(s) URL without credentials like http://host[:port][/path]"
    "https?://([-A-Za-z0-9._+]+(:[-A-Za-z0-9._+]*)?@)?(${hostRe}|[[][0-9A-Fa-f:.]+[]])(:[0-9]+)?(/[-A-Za-z0-9._+@/=,]*)?"
    (v: if match "https?://[^/]*@.*" v != null
      then "the URL holds credentials (user:password@), which would sit in every node's process list; restrict the cache by address instead"
      else null);
  # NO_PROXY: hosts, .domains, CIDRs and * separated by commas.
  noProxy = strMatching "a comma-separated list of hosts, .domains and CIDRs" "[-A-Za-z0-9.*/:_]+(,[-A-Za-z0-9.*/:_]+)*";
  # An image registry with an optional repository path, as image references start.
  registry = strMatching "a registry like registry.k8s.io or host:5000/path"
    "${hostRe}(:[0-9]+)?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*";
  # A registry prefix of containerd's certs.d (a directory name): a host[:port] or _default.
  registryHost = strMatching "a registry host[:port] or _default" "_default|${hostRe}(:[0-9]+)?";
  envName = strMatching "an environment variable name" "[A-Za-z_][A-Za-z0-9_]*";
  # An env file value read both by systemd (EnvironmentFile=) and by sh (`. /etc/etcd.env`).
  envValue = strMatching "a value of letters, digits and . _ , : / = @ + - (no spaces, quotes or shell syntax)"
    "[-A-Za-z0-9._,:/=@+]*";
  # A command-line flag (--name or --name=value) that can sit inside "..." in an env file.
  flag = strMatching "a flag like --name=value (no spaces, quotes, $, ` or \\)"
    "--?[A-Za-z0-9][-A-Za-z0-9._]*(=[-A-Za-z0-9._,:/=@+%<>*]*)?";
  featureGate = strMatching "a feature gate like Name or Name=true" "[A-Za-z0-9]+(=(true|false))?";
  # A flag name as kubeadm's extraArgs take it (no leading dashes).
  argName = strMatching "a flag name without dashes" "[a-z0-9][-a-z0-9]*";
  sysctlKey = strMatching "a sysctl key like net.ipv4.ip_forward" "-?[A-Za-z0-9_][-A-Za-z0-9_./*]*";
  userName = strMatching "a user name" "[A-Za-z_][-A-Za-z0-9_.]*";

  # A file on the deployer: a string, or a Nix path (turned into its string form; never
  # copied to the store).
  deployerPath = mk {
    name = "a path on the deployer (string or path)";
    shape = { kind = "string"; };
    verify = v: if isString v || isPath v then null else "expected a path (string or path), got ${describeValue v}";
    normalize = v: toString v;
  };

  # A key or token file read as a secret (a secretFile source): a Nix path, or a string
  # relative to the project or absolute on the deployer, of plain names (no .., spaces,
  # quotes or shell syntax).
  secretPath = let
    what = "a key or token file (a path, or a string relative to the project or absolute; plain names, no ..)";
    component = "[.]?[A-Za-z0-9_@+][-A-Za-z0-9_.@+]*";
  in mk {
    name = what;
    shape = { kind = "string"; };
    verify = v:
      if isPath v then null
      else if !(isString v) then "expected ${what}, got ${describeValue v}"
      else if match "/?${component}(/${component})*" v == null then "${toJSON v} is not ${what}"
      else null;
    normalize = v: toString v;
  };

  ipv4 = mk {
    name = "an IPv4 address";
    shape = { kind = "string"; };
    verify = v:
      if !(isString v) then "expected an IPv4 address, got ${describeValue v}"
      else if ip.parse v == null then "${toJSON v} is not an IPv4 address"
      else null;
  };

  cidr = mk {
    name = "an IPv4 CIDR block";
    shape = { kind = "string"; };
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
    shape = { kind = "string"; };
    verify = v:
      if builtins.elem v vals then null
      else if isString v then
        "unknown value ${toJSON v} (expected one of: ${concatStringsSep ", " vals}).${errors.didYouMean v vals}"
      else "expected one of ${concatStringsSep ", " (map toJSON vals)}, got ${describeValue v}";
  };

  nullOr = t: mk {
    name = "null or ${t.name}";
    shape = { kind = "nullOr"; of = t.shape; };
    verify = v: if v == null then null else t.verify v;
    normalize = v: if v == null then null else t.normalize v;
    values = t.values;
  };

  listOf = t: mk {
    name = "a list of ${t.name}";
    shape = { kind = "list"; of = t.shape; };
    verify = v:
      if !(isList v) then "expected a list of ${t.name}, got ${describeValue v}"
      else firstError (genList (i: let m = t.verify (elemAt v i); in if m == null then null else "element ${toString (i + 1)}: ${m}") (length v));
    normalize = map t.normalize;
  };

  # A program's words, run without a shell (a secretCommand): the program a name or a
  # path of plain characters, then its arguments, each a line of text.
  argv = let
    program = "[A-Za-z0-9_./@+][-A-Za-z0-9_./@+]*";
    what = "a command's words [ program arg... ] (the program a name or path of letters, digits and . _ + @ / -)";
  in mk {
    name = what;
    shape = { kind = "list"; of = { kind = "string"; }; };
    verify = v:
      if !(isList v) || v == [ ] then "expected ${what}, got ${describeValue v}"
      else if !(isString (head v)) || match program (head v) == null then "${toJSON (head v)}: the program of ${what}"
      else (listOf line).verify v;
  };

  attrsOf = t: mk {
    name = "an attribute set of ${t.name}";
    shape = { kind = "attrs"; of = t.shape; };
    verify = v:
      if !(isAttrs v) then "expected an attribute set of ${t.name}, got ${describeValue v}"
      else firstError (map (k: let m = t.verify v.${k}; in if m == null then null else "attribute '${k}': ${m}") (attrNames v));
    normalize = mapAttrs (_: t.normalize);
  };

  # attrsOf whose attribute names must be of type `key` too (they become env variable
  # names, sysctl keys, directory names).
  attrsWithNames = key: t: let a = attrsOf t; in a // {
    name = "an attribute set of ${t.name} named by ${key.name}";
    verify = v:
      let bad = if isAttrs v then filter (k: key.verify k != null) (attrNames v) else [ ]; in
      if bad != [ ] then "attribute name ${key.verify (head bad)}" else a.verify v;
  };

  oneOf = ts: mk {
    name = concatStringsSep " or " (map (t: t.name) ts);
    shape = { kind = "oneOf"; of = map (t: t.shape) ts; };
    verify = v:
      if builtins.any (t: t.verify v == null) ts then null
      else "expected ${concatStringsSep " or " (map (t: t.name) ts)}, got ${describeValue v}";
    normalize = v: let ok = filter (t: t.verify v == null) ts; in (head ok).normalize v;
  };

  # Text used exactly as the user wrote it: a command kdeploy runs as root (a custom
  # hook or check), a unit's or a file's content. It is the user's own code by design,
  # never assembled from other settings, so it is not a place where a value could
  # inject shell (tests/payloads/slots.nix skips the "code" shape).
  code = what: mk {
    name = what;
    shape = { kind = "code"; };
    verify = v: if isString v then null else "expected ${what}, got ${describeValue v}";
  };

  # A file of the project, relative to its root.
  projectPath = strMatching "a path relative to the project (no leading /, no ..)"
    "([A-Za-z0-9_][-A-Za-z0-9_.]*/)*[A-Za-z0-9_][-A-Za-z0-9_.]*";

  # Free-form JSON-like data (strings, numbers, bools, null, lists, attrsets).
  json = mk {
    name = "JSON-like data";
    shape = { kind = "json"; };
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
    shape = { kind = "struct"; fields = mapAttrs (_: f: { shape = f.type.shape; } // (if f ? default then { inherit (f) default; } else { })) fields; };
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

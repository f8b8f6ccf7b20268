# IPv4 arithmetic in pure Nix: parse/format addresses, CIDR blocks, overlap and
# containment tests, n-th address of a block, and address ranges. Addresses are ints.
# Parsers return null on malformed input; callers turn that into a located error.
let
  inherit (builtins) elemAt foldl' genList length match toString div;

  pow2Table = genList (i: foldl' (a: _: a * 2) 1 (genList (x: x) i)) 33;
  pow2 = n: elemAt pow2Table n;

  octetRe = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  addrRe = "${octetRe}\\.${octetRe}\\.${octetRe}\\.${octetRe}";

  toInt = s: builtins.fromJSON s; # digits only, already validated by the regex
in
rec {
  inherit pow2;

  # "10.0.0.1" -> 167772161, or null if not a dotted-quad IPv4 address.
  parse = s:
    let m = if builtins.isString s then match addrRe s else null; in
    if m == null then null
    else foldl' (acc: o: acc * 256 + toInt o) 0 m;

  isValid = s: parse s != null;

  format = n:
    let
      o = i: toString (builtins.bitAnd (div n (pow2 (8 * i))) 255);
    in
    "${o 3}.${o 2}.${o 1}.${o 0}";

  # "10.233.64.0/18" -> { base; prefix; size; first; last; aligned; text } or null.
  parseCidr = s:
    let
      m = if builtins.isString s then match "(${addrRe})/([0-9]|[12][0-9]|3[0-2])" s else null;
    in
    if m == null then null
    else
      let
        addr = parse (elemAt m 0);
        prefix = toInt (elemAt m 5);
        size = pow2 (32 - prefix);
        first = addr - (addr - (div addr size) * size);
      in
      {
        inherit prefix size first;
        last = first + size - 1;
        aligned = first == addr;
        text = s;
        network = "${format first}/${toString prefix}";
      };

  overlaps = a: b: a.first <= b.last && b.first <= a.last;
  contains = block: addrInt: addrInt >= block.first && addrInt <= block.last;

  # The n-th address of a block (n = 1 is the first usable one), as text.
  nth = block: n: format (block.first + n);

  # How many blocks of /childPrefix fit in `block` (0 if childPrefix < block prefix).
  subnetCount = block: childPrefix:
    if childPrefix < block.prefix then 0 else pow2 (childPrefix - block.prefix);

  # `count` consecutive addresses starting at `start` (text). Throws on bad input.
  range = start: count:
    let s = parse start; in
    if s == null then throw "kdeploy: address range: '${toString start}' is not an IPv4 address"
    else if s + count - 1 > 4294967295 then throw "kdeploy: address range: ${start} + ${toString count} runs past 255.255.255.255"
    else genList (i: format (s + i)) count;
}

# The module system's loop, `concatMap (d: if hasAttr name d.value then [ … ]
# else [ ]) defs`, asked for many names over the same definitions (kdeploy
# indexes such a list from its second loop on): the elements with the name,
# in list order; a value set kept as a base under an overlay (`big //
# small`); definitions not evaluated yet when the index is made (a loop
# stopped by one that throws), which every later loop still meets.
let
  inherit (builtins) concatMap hasAttr genList listToAttrs length elemAt seq tryEval;
  big = listToAttrs (genList (i: { name = "b${toString i}"; value = i; }) 70);
  defs = genList (i: {
    file = "f${toString i}";
    value =
      if i == 7 then big // { n3 = "over"; }
      else if i == 31 then throw "boom"
      else { "n${toString (i - (i / 5) * 5)}" = i; "m${toString i}" = true; };
  }) 40;
  sdefs = genList (i: elemAt defs (if i < 31 then i else i + 1)) 39;
  at = list: name: concatMap (d: if hasAttr name d.value then [ "${d.file}=${toString d.value.${name}}" ] else [ ]) list;
  names = [ "n0" "n1" "n3" "b5" "m7" "m30" "zz" "n2" "n4" "b69" ];
  r1 = tryEval (length (at defs "n1"));
  r2 = seq r1 (tryEval (length (at defs "n2")));
  rest = seq r2 (map (i: length (builtins.attrNames (elemAt defs i).value)) (genList (i: i + 32) 8));
  r3 = seq rest (map (n: tryEval (length (at defs n))) [ "n3" "zz" ]);
  firstRound = seq r3 (map (at sdefs) names);
  secondRound = seq firstRound (map (at sdefs) names);
in
{
  inherit r1 r2 rest r3 firstRound;
  same = secondRound == firstRound;
  counts = map (n: length (at sdefs n)) [ "n0" "n1" "n2" "n3" "n4" ];
}

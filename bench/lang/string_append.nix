# A long string built by repeated concatenation in a loop: 20000 appends of a
# ~31-character line (s + "line ${i} ...\n"), so the final string is ~0.6 MB
# and every append copies the accumulator (quadratic in both evaluators).
# Result: length.
# expect: 628890
builtins.stringLength (builtins.foldl'
  (s: i: s + "line ${toString i} of the appended text\n")
  ""
  (builtins.genList (i: i) 20000))

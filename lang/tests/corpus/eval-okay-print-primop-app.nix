# Printed without --json: a builtin applied to fewer arguments than it
# takes is <PRIMOP-APP>; a builtin alone is <PRIMOP>.
[
  builtins.add
  (builtins.add 1)
  (builtins.foldl' (acc: x: acc))
  (builtins.substring 0 2)
  map
  (x: x)
]

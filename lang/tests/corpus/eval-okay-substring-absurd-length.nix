[
  (builtins.substring 0 100000000000000000 "abc")
  (builtins.substring 100000000000000000 1 "abc")
  (builtins.substring 1 (-1) "abc")
]

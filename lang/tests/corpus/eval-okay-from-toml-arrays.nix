builtins.fromTOML ''
  ints = [ 1, 2, 3 ]
  strs = [ "a", "b" ]
  nested = [ [ 1, 2 ], [ "x" ] ]
  empty = []
  multiline = [
    1,
    2,
  ]
''

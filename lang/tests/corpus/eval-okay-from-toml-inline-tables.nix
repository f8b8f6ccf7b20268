builtins.fromTOML ''
  point = { x = 1, y = 2 }
  nested = { a = { b = "c" } }
  empty = {}
  list = [ { n = 1 }, { n = 2 } ]
''

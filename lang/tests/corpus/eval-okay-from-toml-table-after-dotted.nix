builtins.fromTOML ''
  [a]
  b.c = 1
  [a.d]
  e = 2
''

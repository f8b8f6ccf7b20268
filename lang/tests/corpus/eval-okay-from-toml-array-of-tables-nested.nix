builtins.fromTOML ''
  [[a.b]]
  x = 1
  [[a.b]]
  x = 2
  [a.c]
  y = 3
''

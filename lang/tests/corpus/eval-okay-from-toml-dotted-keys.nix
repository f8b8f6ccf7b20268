builtins.fromTOML ''
  a.b.c = 1
  a.b.d = 2
  "quoted key" = 3
  site."google.com" = true
  bare-key_1 = 4
''

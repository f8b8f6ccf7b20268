builtins.fromTOML ''
  "key with spaces" = 1
  'literal key' = 2
  "" = 3
  [ "quoted table" ]
  x = 4
''

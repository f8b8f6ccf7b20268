builtins.fromTOML ''
  str = "hello"
  int = 42
  neg = -17
  float = 1.5
  bool = true
  off = false
''

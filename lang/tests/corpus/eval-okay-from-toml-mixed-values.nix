builtins.fromTOML ''
  neg = -0.5
  bools = [ true, false ]
  1 = "numeric key"
  mixed = [ 1, "b" ]
''

builtins.fromTOML ''
  # comment
  a = 1 # trailing comment
  b = "# not a comment"
''

builtins.fromTOML ''
  hex = 0xff
  oct = 0o17
  bin = 0b1010
  underscores = 1_000_000
  plus = +5
  fexp = 2.5e-1
  big = 9223372036854775807
''

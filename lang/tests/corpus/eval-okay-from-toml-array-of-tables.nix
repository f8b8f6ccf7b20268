builtins.fromTOML ''
  [[fruit]]
  name = "apple"

  [[fruit]]
  name = "banana"
  [fruit.props]
  color = "yellow"

  [[fruit]]
''

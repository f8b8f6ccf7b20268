builtins.stringLength ''
  abc
  def
''

let x = "X"; in ''
  ''${x} and ${x} and $${x}
''

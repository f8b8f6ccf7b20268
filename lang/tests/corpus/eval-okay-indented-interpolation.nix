let x = "X"; y = "multi\nline"; in ''
  a ${x} b
  ${x}
    ${y}
''

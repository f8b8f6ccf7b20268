# indentation stripping does not apply inside interpolated strings
let inner = "  a\n  b"; in ''
    x
    ${inner}
''

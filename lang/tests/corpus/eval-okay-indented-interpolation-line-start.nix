# interpolation at the start of a line counts as non-whitespace for the indentation
let v = "V"; in [ ''
  ${v}
    two
'' ''
    ${v}
  one
'' ]

# Printed without --json, a string is quoted and `${` escaped, so that the
# text reads back as the same string; a lone `$` stays as it is.
[
  "cost: $5"
  "literal \${name} here"
  ''also ''${this}''
  "tab\tquote\"backslash\\"
]

[ (builtins.toJSON "quote\" backslash\\ newline\n tab\t cr\r") (builtins.toJSON "unicode é 日本") (builtins.toJSON "/slash")
  (builtins.toJSON (builtins.fromJSON ''"\u0001\u001f"'')) (builtins.toJSON "\${x}") ]

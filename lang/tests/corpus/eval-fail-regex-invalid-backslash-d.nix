# expect: invalid regular expression
builtins.match "\\d" "1"

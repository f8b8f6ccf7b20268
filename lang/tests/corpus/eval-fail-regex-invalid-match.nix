# expect: invalid regular expression '('
builtins.match "(" "x"

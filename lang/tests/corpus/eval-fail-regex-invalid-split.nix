# expect: invalid regular expression '[a'
builtins.split "[a" "x"

[ (builtins.match "([^\n]*)\n(.*)" "first\nsecond\nthird") (builtins.match "a.b" "a\nb") ]

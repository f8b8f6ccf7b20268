# expect: value is a path while a string was expected
builtins.match "a" ./lib/data.txt

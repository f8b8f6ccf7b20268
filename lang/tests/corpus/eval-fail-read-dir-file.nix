# expect: Not a directory
builtins.readDir ./lib/data.txt

# expect: Is a directory
builtins.readFile ./lib

# expect: No such file or directory
builtins.readFile ./lib/does-not-exist.txt

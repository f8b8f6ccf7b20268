# expect: No such file or directory
builtins.readFile (./lib + "/nope.txt")

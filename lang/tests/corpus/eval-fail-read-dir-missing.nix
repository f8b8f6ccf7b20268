# expect: No such file or directory
builtins.readDir ./lib/does-not-exist

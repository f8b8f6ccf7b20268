builtins.readDir ./lib/sub

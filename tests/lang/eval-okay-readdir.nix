builtins.readDir ./lib/readdir

[ (builtins.pathExists ./lib/data.txt) (builtins.pathExists ./lib) (builtins.pathExists ./lib/does-not-exist)
  (builtins.pathExists ./lib/readdir/sub) (builtins.pathExists (toString ./lib/data.txt)) ]

# a path literal in an imported file is relative to that file
let p = import ./lib/path-value.nix; in [ (baseNameOf p) (builtins.readFile p) (p == ./lib/data.txt) ]

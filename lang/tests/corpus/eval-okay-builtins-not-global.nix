# most builtins are not in the global scope; `with builtins;` style lookups fall back to `or`
let s = { }; in [ (builtins ? length) (builtins ? head) (builtins ? nonExistingBuiltin) (builtins.builtins ? map) ]

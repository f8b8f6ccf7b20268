# the imported file is only evaluated when its value is needed
let x = import ./lib/throws.nix; in { ok = true; list = [ 1 2 ]; len = builtins.length [ (import ./lib/throws.nix) ]; }

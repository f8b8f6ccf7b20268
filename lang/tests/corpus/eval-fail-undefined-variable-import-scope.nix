# expect: undefined variable 'secret'
let secret = 1; in import ./lib/free-var.nix

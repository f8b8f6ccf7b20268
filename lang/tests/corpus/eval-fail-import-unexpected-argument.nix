# expect: called with unexpected argument 'c'
import ./lib/fun.nix { a = 1; c = 3; }

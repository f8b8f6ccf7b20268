# expect: called without required argument 'a'
import ./lib/fun.nix { }

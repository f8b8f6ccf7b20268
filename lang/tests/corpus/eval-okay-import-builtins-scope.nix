# an imported file still sees the global builtins
import ./lib/with-builtins.nix

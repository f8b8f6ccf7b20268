# expect: lib/throws.nix was forced
import ./lib/throws.nix

# expect: syntax error
import ./lib/syntax-error.nix

# expect: No such file or directory
import ./lib/does-not-exist.nix

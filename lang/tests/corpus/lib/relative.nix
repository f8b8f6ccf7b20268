# relative paths resolve against this file's directory
import ./simple.nix

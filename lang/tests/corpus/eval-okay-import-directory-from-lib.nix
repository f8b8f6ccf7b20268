(import ./lib/imports-dir.nix).sibling

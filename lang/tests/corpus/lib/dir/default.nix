{ fromDefault = true; sibling = import ./sibling.nix; }

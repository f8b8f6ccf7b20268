{ up = import ../simple.nix; here = builtins.readFile ./nested.txt; name = baseNameOf ./nested.txt; }

# how control characters and quotes are printed by nix-instantiate --json
# "\x01" is not an escape in Nix (it is just "x01"); get control characters via fromJSON
[ "\"" "\\" "\n" "\t" "\r" "/" "\x01" (builtins.fromJSON ''"\u0001\u001f\u007f"'') ]

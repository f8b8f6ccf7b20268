map (s: builtins.typeOf (builtins.fromJSON s)) [ "1" "1.0" "1e2" "1E2" "-3" "2.5e-1" "0" ]

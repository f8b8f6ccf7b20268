map builtins.fromJSON [ "1" "-5" "0" "1.5" "-0.25" "\"str\"" "true" "false" "null" "  42  " ]

let v = { a = [ 1 "two" null true { b = [ ]; } ]; s = "esc\"aped\n"; }; in builtins.fromJSON (builtins.toJSON v) == v

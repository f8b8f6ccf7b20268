with { a = 1; b = 2; }; { inherit a b; }

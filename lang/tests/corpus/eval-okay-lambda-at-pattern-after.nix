let f = { a, ... }@args: [ a (builtins.attrNames args) ]; in f { a = 1; b = 2; }

let f = args@{ a, b ? 2, ... }: [ a b (builtins.attrNames args) ]; in f { a = 1; z = 3; }

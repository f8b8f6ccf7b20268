map builtins.typeOf [ 1 1.5 "s" ''ind'' true false null [ ] { } (x: x) ({ a }: a) ./lib builtins.add (builtins.add 1) map builtins ]

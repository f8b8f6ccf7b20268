# expect: predicate forced
builtins.length (builtins.filter (x: x) [ (throw "predicate forced") ])

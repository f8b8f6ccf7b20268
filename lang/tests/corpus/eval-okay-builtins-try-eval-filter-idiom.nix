map (x: x.value) (builtins.filter (x: x.success) (map (x: builtins.tryEval x) [ 1 (throw "no") 3 ]))

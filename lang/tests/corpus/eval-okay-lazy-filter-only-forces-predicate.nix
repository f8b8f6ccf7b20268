builtins.length (builtins.filter (x: true) [ (throw "a") (throw "b") ])

# values keep their list order within each group
builtins.groupBy (x: x.g) [ { g = "b"; v = 1; } { g = "a"; v = 2; } { g = "b"; v = 3; } ]

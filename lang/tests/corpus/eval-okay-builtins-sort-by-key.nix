map (x: x.name) (builtins.sort (a: b: a.age < b.age) [ { name = "c"; age = 3; } { name = "a"; age = 1; } { name = "b"; age = 2; } ])

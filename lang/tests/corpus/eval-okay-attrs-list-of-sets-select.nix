map (s: s.name) [ { name = "a"; } { name = "b"; v = 1; } ]

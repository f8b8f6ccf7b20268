with { x = 1; }; let f = y: x + y; in map f [ 1 2 ]

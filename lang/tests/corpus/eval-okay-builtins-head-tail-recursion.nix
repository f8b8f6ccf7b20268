let sum = xs: if xs == [ ] then 0 else builtins.head xs + sum (builtins.tail xs); in sum [ 1 2 3 4 5 ]

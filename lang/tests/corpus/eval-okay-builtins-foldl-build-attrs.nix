builtins.foldl' (acc: n: acc // { "k${toString n}" = n * n; }) { } [ 1 2 3 ]

let build = n: if n == 0 then [ ] else [ n ] ++ build (n - 1); in builtins.length (build 5000)

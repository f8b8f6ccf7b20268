# 100000 nested non-tail calls: Nix 2.8 overflows its stack here; kdeploy must succeed.
let f = n: if n == 0 then 0 else 1 + f (n - 1); in f 100000

# non-tail recursion 10000 deep (Nix 2.8 overflows its stack at ~100000, see DIFFERENCES.md)
let sum = n: if n == 0 then 0 else n + sum (n - 1); in sum 10000

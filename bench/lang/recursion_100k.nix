# Deep non-tail recursion at depth 100000: past Nix 2.8's limit, so Nix
# reports "error: stack overflow" and only kdeploy's time and memory are
# recorded.
# nix: crash
# expect: 100000
let
  f = n: if n == 0 then 0 else 1 + f (n - 1);
in
f 100000

# Unbounded non-tail recursion ends with kdeploy::too-deep, never a crash.
let f = n: 1 + f (n + 1); in f 0

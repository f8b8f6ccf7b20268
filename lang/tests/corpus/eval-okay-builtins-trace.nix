# trace prints its first argument to stderr and returns the second
[ (builtins.trace "tracing a string" 1) (builtins.trace { a = 1; } "x") (builtins.trace [ 1 2 ] null) ]

builtins.trace "trace" (builtins.trace "nested" { a = builtins.trace "inner" 1; })

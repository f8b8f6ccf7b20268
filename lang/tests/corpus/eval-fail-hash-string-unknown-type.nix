# expect: unknown hash algorithm 'sha3'
builtins.hashString "sha3" "abc"

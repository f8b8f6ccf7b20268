# expect: attempt to call something which is not a function but an integer
builtins.add 1 2 3

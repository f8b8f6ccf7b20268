# expect: attempt to call something which is not a function but an integer
1 2

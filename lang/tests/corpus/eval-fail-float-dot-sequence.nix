# expect: attempt to call something which is not a function but a float
1.2.3

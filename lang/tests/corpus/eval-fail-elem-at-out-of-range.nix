# expect: list index 3 is out of bounds
builtins.elemAt [ 1 2 3 ] 3

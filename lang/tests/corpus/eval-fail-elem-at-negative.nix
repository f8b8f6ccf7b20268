# expect: list index -1 is out of bounds
builtins.elemAt [ 1 2 3 ] (-1)

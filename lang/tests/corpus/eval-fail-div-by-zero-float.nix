# expect: division by zero
1.5 / 0

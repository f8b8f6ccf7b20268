# expect: division by zero
1 / 0

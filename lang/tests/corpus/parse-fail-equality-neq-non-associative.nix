# expect: syntax error, unexpected NEQ
1 == 2 != 3

# expect: syntax error, unexpected EQ
1 == 1 == true

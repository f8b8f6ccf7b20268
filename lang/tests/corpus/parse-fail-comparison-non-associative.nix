# expect: syntax error, unexpected '<'
1 < 2 < 3

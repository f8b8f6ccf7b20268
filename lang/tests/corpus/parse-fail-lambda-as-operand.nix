# expect: syntax error, unexpected ':'
1 + x: x

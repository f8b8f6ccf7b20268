# expect: syntax error, unexpected end of file
x:

# expect: syntax error, unexpected '='
a.b.c = 1

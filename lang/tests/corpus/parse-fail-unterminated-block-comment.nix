# expect: syntax error
1 /* never closed

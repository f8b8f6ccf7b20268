# expect: syntax error, unexpected '/'
/

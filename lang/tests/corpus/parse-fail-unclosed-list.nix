# expect: syntax error, unexpected end of file
[ 1 2

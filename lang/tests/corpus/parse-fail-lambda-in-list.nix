# expect: syntax error, unexpected ':'
[ x: x ]

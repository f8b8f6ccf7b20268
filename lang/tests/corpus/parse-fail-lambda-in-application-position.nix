# expect: syntax error, unexpected ':'
f x: x

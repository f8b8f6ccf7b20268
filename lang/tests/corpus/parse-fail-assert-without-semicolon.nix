# expect: syntax error, unexpected end of file, expecting ';'
assert true 1

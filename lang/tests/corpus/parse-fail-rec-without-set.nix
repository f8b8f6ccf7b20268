# expect: syntax error, unexpected end of file, expecting '{'
rec

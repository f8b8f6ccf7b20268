# expect: syntax error, unexpected end of file, expecting ')'
(1 + 2

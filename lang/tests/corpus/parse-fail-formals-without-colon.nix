# expect: syntax error, unexpected end of file, expecting ':' or '@'
{ a, b }

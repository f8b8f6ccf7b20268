# expect: syntax error, unexpected end of file
{ a = 1; }.a or

# expect: syntax error, unexpected end of file
{ a.b = 1; } .

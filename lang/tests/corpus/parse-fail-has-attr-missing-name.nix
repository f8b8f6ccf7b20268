# expect: syntax error, unexpected end of file
{ a = 1; } ?

# expect: syntax error, unexpected '}', expecting ';'
{ a = 1 }

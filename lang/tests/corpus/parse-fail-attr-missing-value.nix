# expect: syntax error, unexpected ';'
{ a = ; }

# expect: syntax error, unexpected '.'
{ inherit a.b; }

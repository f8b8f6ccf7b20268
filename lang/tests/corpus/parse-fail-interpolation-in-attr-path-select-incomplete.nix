# expect: syntax error
{ a = 1; }.${

# expect: undefined variable 'b'
{ a = 1; b = 2; c = b; }

# expect: attribute 'x' missing
{ a = 1; }.x

# expect: attempt to call something which is not a function but a set
{ a = 1; } 1

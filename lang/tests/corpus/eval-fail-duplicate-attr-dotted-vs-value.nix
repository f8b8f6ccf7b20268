# expect: attribute 'a.b' already defined
{ a = 1; a.b = 2; }

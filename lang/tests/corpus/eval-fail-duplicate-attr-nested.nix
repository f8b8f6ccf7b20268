# expect: attribute 'a.b' already defined
{ a.b = 1; a.b = 2; }

# expect: attribute 'a' already defined
{ a = 1; a = 2; }

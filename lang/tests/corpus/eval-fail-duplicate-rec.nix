# expect: attribute 'a' already defined
rec { a = 1; a = 2; }

# expect: value is an integer while a set was expected
{ a = 1; }.a.b

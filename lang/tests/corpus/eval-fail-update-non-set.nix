# expect: value is an integer while a set was expected
{ } // 1

# expect: value is an integer while a list was expected
1 ++ [ ]

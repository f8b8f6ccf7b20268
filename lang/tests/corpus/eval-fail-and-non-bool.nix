# expect: value is an integer while a Boolean was expected
1 && true

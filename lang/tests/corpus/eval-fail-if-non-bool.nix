# expect: value is an integer while a Boolean was expected
if 1 then 2 else 3

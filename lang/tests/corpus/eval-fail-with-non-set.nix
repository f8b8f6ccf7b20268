# expect: value is an integer while a set was expected
with 1; x

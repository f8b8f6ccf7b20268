# expect: value is a string while an integer was expected
1 - "a"

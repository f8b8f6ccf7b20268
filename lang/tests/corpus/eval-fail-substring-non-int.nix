# expect: value is a string while an integer was expected
builtins.substring "0" 1 "abc"

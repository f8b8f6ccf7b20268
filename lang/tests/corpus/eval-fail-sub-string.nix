# expect: value is a string while an integer was expected
"a" - 1

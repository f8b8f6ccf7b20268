# expect: cannot coerce an integer to a string
"a" + 1

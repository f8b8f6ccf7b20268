# expect: cannot compare a string with an integer
"a" < 1

# expect: cannot compare a string with an integer
builtins.lessThan "1" 2

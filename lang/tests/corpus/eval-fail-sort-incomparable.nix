# expect: cannot compare a string with an integer
builtins.sort builtins.lessThan [ 1 "a" ]

# expect: cannot add a string to an integer
1 + "a"

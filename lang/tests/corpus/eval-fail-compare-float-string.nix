# expect: cannot compare a float with a string
1.5 < "a"

# expect: cannot convert a function to JSON
x: x

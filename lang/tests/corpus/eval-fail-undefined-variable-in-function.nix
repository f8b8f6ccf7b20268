# expect: undefined variable 'y'
x: y

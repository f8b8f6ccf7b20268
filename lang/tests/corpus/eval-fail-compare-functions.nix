# expect: cannot compare a function with a function
(x: x) < (x: x)

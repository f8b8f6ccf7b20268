# expect: cannot coerce a function to a string
toString [ 1 (x: x) ]

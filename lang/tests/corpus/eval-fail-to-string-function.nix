# expect: cannot coerce a function to a string
toString (x: x)

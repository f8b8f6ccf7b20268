# expect: cannot coerce a function to a string
"${x: x}"

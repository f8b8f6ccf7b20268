# expect: cannot coerce a set to a string
toString { a = 1; }

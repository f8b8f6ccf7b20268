# expect: cannot coerce a set to a string
{ } + { }

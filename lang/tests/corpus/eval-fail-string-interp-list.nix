# expect: cannot coerce a list to a string
"${[ "a" ]}"

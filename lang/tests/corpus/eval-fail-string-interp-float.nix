# expect: cannot coerce a float to a string
"${1.5}"

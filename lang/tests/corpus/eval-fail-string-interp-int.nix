# expect: cannot coerce an integer to a string
"${1}"

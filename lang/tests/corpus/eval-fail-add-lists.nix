# expect: cannot coerce a list to a string
[ 1 ] + [ 2 ]

# expect: cannot compare an integer with a string
[ 1 ] < [ "a" ]

# expect: cannot compare a set with a set
[ { a = 1; } ] < [ { a = 2; } ]

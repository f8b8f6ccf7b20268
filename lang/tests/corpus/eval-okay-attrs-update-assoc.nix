# // is right associative; for update the grouping does not change the result
[ (({ a = 1; } // { a = 2; b = 2; }) // { b = 3; }) ({ a = 1; } // ({ a = 2; b = 2; } // { b = 3; })) ]

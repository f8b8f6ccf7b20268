# expect: cannot convert a function to JSON
{ f = x: x; }

# `or` also catches selecting from a value that is not an attribute set
let x = 1; s = { a = "str"; }; in [ (x.a or "int") (s.a.b or "string") ([ ].x or "list") ]

# ? binds tighter than == and &&, and tighter than negation
let s = { a = 1; }; in [ (s ? a == true) (s ? a && s ? b) (!s ? b) (s ? a || false) ]

# without rec, attribute names are not in scope for the values
let a = "outer"; in { a = "inner"; b = a; }

# inherit in a rec set takes the value from the enclosing scope, not from the set itself
let a = "outer"; in (rec { inherit a; b = a; }).b

# expect: value is an integer while a set was expected
let x = 1; in x.a

# expect: value is a string while a set was expected
let x = "s"; in x.a

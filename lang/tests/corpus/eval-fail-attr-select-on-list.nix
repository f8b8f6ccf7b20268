# expect: value is a list while a set was expected
let x = [ ]; in x.a

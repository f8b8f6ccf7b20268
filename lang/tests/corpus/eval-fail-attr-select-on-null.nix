# expect: value is null while a set was expected
let x = null; in x.a

# `2e3` lexes as the integer 2 applied to the variable e3; here it is passed as a second argument
let e3 = "e3-variable"; f = a: b: [ a b ]; in f 2e3

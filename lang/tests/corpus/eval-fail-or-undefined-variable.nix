# expect: undefined variable 'or'
let f = x: x; in f or

# expect: undefined variable 'nope'
let unused = nope; in 1

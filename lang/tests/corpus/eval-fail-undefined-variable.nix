# expect: undefined variable 'nope'
let x = 1; in nope

# expect: attribute 'x' already defined
let x = 1; x = 2; in x

# expect: syntax error, unexpected '='
let x = 1; in x = 2

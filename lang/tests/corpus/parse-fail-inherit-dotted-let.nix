# expect: syntax error, unexpected '.'
let inherit a.b; in 1

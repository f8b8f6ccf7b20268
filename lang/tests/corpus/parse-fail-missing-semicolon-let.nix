# expect: syntax error, unexpected IN, expecting ';'
let a = 1 in a

# expect: syntax error, unexpected OR_KW
let or = 1; in or

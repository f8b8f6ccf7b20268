# expect: syntax error, unexpected end of file
let in

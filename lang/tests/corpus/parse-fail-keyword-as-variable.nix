# expect: syntax error, unexpected IF
let if = 1; in if

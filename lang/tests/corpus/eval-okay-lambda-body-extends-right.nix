# a lambda body extends as far right as possible
let f = x: x + 1 * 2; in f 1

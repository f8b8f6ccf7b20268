# expect: undefined variable 'z'
let f = x: z; in 1

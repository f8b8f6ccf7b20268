# expect: attribute 'body' missing
let { a = 1; }

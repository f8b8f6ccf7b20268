# expect: attempt to call something which is not a function but a list
let xs = [ ]; in xs 1

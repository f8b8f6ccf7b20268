# Nix 2.8 accepts a dynamic attribute in let when it is a constant string
let ${"a"} = 1; "b" = 2; in a + b

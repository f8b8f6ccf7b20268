# expect: dynamic attributes not allowed in let
let ${"a" + "b"} = 1; in ab

# expect: attribute 'a' already defined
let a = 1; in { inherit a; a = 2; }

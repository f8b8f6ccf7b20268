# expect: attribute 'missing' missing
let s = { }; in { inherit (s) missing; }.missing

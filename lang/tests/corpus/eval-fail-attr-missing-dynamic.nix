# expect: attribute 'dyn' missing
let k = "dyn"; in { }.${k}

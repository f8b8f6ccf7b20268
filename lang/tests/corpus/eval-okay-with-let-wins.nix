# lexically bound variables always win over with, even if the with is inner
let a = "let"; in with { a = "with"; }; a

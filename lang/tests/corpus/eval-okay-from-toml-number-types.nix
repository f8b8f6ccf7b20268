let t = builtins.fromTOML "i = 1\nf = 1.0\ne = 1e2"; in [ (builtins.typeOf t.i) (builtins.typeOf t.f) (builtins.typeOf t.e) (t.f == 1) (t.e == 100) ]

let f = _: "ignored"; g = _x: _x; h = a_b': a_b' + 1; in [ (f null) (g 1) (h 1) ]

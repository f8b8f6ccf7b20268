let f = a: b: c: d: e: [ a b c d e ]; in f 1 2 3 4 5

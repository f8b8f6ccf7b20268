let x = "outer"; f = x: let y = x; in [ x y ]; in f "param"

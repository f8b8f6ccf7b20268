let f = x: x; s = { }; in [ (f s.a or "default") ]

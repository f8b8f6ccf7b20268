let a = { }; in [ (a.b or a.c or 3) (a.b or (a.c or 4)) ({ x = 1; }.x.y or 5) ]

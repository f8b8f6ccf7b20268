let x = "outer"; f = x: x; g = { x }: x; in [ (f "arg") (g { x = "formal"; }) x ]

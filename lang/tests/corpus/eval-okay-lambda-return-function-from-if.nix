let pick = b: if b then (x: x + 1) else (x: x - 1); in [ (pick true 10) (pick false 10) ]

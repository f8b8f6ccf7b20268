let pick = b: if b then { v = "yes"; } else { v = "no"; }; in [ (with pick true; v) (with pick false; v) ]

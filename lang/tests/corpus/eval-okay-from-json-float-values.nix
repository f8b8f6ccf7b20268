# compare instead of printing to avoid float formatting questions
let f = builtins.fromJSON; in [ (f "1.5" == 1.5) (f "1e2" == 100) (f "-2.5E-1" == -0.25) (f "0.5" + 1) ]

let a-b = 1; c'd = 2; _e = 3; f'' = 4; x-1 = 5; in [ a-b c'd _e f'' x-1 ]

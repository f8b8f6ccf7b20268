let x = 1; in [ x (let x = 2; in x) (let y = x; x = 3; in y) x ]

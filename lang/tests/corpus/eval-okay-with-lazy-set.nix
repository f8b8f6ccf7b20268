# the set of a with is only evaluated when a variable is looked up in it
[ (with throw "not evaluated"; 1) (let x = 2; in with abort "not evaluated"; x) ]

# expect: deep in a list
[ 1 [ 2 (throw "deep in a list") ] ]

# expect: compared
[ 1 ] == [ (throw "compared") ]

# `1.` and `.5` are floats, `1.2.3` would be `1.2 0.3`
[ (builtins.typeOf 1.) .5 0.5 (1. == 1) (builtins.typeOf .5) ]

let xs = builtins.genList (i: builtins.bitXor (i * 7919) 4093) 5000; s = builtins.sort builtins.lessThan xs; in
[ (builtins.head s) (builtins.elemAt s 4999) (builtins.length s) ]

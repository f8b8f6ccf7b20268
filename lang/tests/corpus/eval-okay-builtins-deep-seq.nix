[ (builtins.deepSeq [ 1 { a = 2; } ] "ok") (builtins.deepSeq 1 2) (builtins.deepSeq { } [ ]) ]

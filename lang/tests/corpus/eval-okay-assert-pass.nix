[ (assert true; 1) (assert 1 == 1; "ok") (assert builtins.isInt 1; assert true; "twice") ]

# expect: abort is not caught
builtins.tryEval (abort "abort is not caught")

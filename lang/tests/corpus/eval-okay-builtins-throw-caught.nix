builtins.tryEval (throw "message")

# expect: attribute 'missing' missing
builtins.tryEval { }.missing

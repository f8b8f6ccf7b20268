# expect: from builtins.throw
builtins.throw "from builtins.throw"

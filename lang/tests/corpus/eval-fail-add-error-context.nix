# expect: inner
builtins.addErrorContext "outer context" (throw "inner")

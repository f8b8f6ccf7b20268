# expect: value is a list while a set was expected
builtins.intersectAttrs [ ] { }

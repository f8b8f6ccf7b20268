# expect: value is an integer while a list was expected
builtins.concatLists [ [ 1 ] 2 ]

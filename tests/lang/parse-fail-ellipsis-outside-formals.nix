# expect: syntax error
[ ... ]

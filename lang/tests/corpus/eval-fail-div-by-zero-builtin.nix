# expect: division by zero
builtins.div 7 0

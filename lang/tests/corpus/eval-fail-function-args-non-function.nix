# expect: 'functionArgs' requires a function
builtins.functionArgs 1

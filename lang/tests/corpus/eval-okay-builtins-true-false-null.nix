[ builtins.true builtins.false builtins.null (builtins.true == true) ]

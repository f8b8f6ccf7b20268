# expect: builtins.abort message
builtins.abort "builtins.abort message"

[ (builtins.addErrorContext "context message" 42) (builtins.addErrorContext "ctx" "value") ]

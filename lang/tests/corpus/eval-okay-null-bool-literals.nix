[ null true false (builtins.typeOf null) (builtins.typeOf true) (builtins.typeOf false) ]

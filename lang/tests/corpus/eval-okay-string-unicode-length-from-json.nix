builtins.stringLength (builtins.fromJSON ''"\u00e9\u65e5"'')

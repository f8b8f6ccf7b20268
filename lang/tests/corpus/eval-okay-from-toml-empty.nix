[ (builtins.fromTOML "") (builtins.fromTOML "# only a comment\n") ]

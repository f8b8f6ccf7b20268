[ (builtins.typeOf [ ]) (builtins.isList [ ]) (builtins.isList { }) (builtins.isList "[]") ]

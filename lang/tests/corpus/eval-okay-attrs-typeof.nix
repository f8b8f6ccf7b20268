[ (builtins.typeOf { }) (builtins.isAttrs { }) (builtins.isAttrs [ ]) (builtins.typeOf builtins) ]

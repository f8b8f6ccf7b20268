[ { } (builtins.attrNames { }) ({ } == { }) ]

# A path value outside the project is fine as long as nothing reads it.
[ (builtins.typeOf /.) (baseNameOf (dirOf /tmp)) ]

[ (builtins.isFunction (x: x)) (builtins.isFunction ({ a }: a)) (builtins.isFunction map) (builtins.isFunction (map (x: x)))
  (builtins.isFunction builtins.add) (builtins.isFunction (builtins.add 1)) (builtins.isFunction { }) (builtins.isFunction "f")
  (builtins.typeOf (x: x)) (builtins.typeOf map) (builtins.typeOf (builtins.add 1)) ]

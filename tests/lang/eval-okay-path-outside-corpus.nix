# the only case that looks at the file system outside tests/lang (see DIFFERENCES.md)
[ (builtins.typeOf /.) (builtins.pathExists /.) (baseNameOf (dirOf /tmp))
  (builtins.pathExists "/definitely/not/an/existing/path/kdeploy-test") ]

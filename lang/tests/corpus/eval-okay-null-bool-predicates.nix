[ (isNull null) (builtins.isNull null) (isNull false) (builtins.isBool true) (builtins.isBool false)
  (builtins.isBool null) (builtins.isBool 0) (null == null) (null == false) (true == 1) (false == 0) ]

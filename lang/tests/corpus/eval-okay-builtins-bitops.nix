{
  and = [ (builtins.bitAnd 12 10) (builtins.bitAnd 0 (-1)) (builtins.bitAnd (-1) (-1)) (builtins.bitAnd (-8) 15) ];
  or = [ (builtins.bitOr 12 10) (builtins.bitOr 0 0) (builtins.bitOr (-8) 3) ];
  xor = [ (builtins.bitXor 12 10) (builtins.bitXor 5 5) (builtins.bitXor (-1) 0) (builtins.bitXor 9223372036854775807 (-1)) ];
}

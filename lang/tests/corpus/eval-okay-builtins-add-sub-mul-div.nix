{
  add = [ (builtins.add 1 2) (builtins.add 1.5 1) (builtins.add (-1) 1) ];
  sub = [ (builtins.sub 1 2) (builtins.sub 2.5 0.25) ];
  mul = [ (builtins.mul 3 (-4)) (builtins.mul 0.5 5) ];
  div = [ (builtins.div 9 3) (builtins.div 10 4) (builtins.div (-10) 4) (builtins.div 1.0 4) ];
}

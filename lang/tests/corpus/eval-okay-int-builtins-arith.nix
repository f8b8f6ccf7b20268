{
  add = builtins.add 3 4;
  sub = builtins.sub 3 4;
  mul = builtins.mul 3 4;
  div = builtins.div 13 4;
  addPartial = (builtins.add 10) 5;
  mapped = map (builtins.mul 2) [ 1 2 3 ];
}

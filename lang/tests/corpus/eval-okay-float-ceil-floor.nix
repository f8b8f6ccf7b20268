{
  ceilPos = builtins.ceil 1.5;
  ceilNeg = builtins.ceil (-1.5);
  ceilWhole = builtins.ceil 2.0;
  ceilSmall = builtins.ceil 0.0001;
  floorPos = builtins.floor 1.5;
  floorNeg = builtins.floor (-1.5);
  floorWhole = builtins.floor 3.0;
  ceilInt = builtins.ceil 7;
  floorInt = builtins.floor (-7);
  types = [ (builtins.typeOf (builtins.ceil 1.2)) (builtins.typeOf (builtins.floor 1.2)) ];
  big = builtins.floor 1.0e15;
}

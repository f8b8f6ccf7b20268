let even = x: builtins.bitAnd x 1 == 0; in
{
  all = [ (builtins.all even [ 2 4 ]) (builtins.all even [ 2 3 ]) (builtins.all even [ ]) ];
  any = [ (builtins.any even [ 1 2 ]) (builtins.any even [ 1 3 ]) (builtins.any even [ ]) ];
  shortCircuitAll = builtins.all (x: x) [ false (throw "not forced") ];
  shortCircuitAny = builtins.any (x: x) [ true (throw "not forced") ];
}

map (x: x.key) (builtins.genericClosure {
  startSet = [ { key = "a"; } ];
  operator = x: { a = [ { key = "b"; } { key = "c"; } ]; b = [ { key = "c"; } { key = "d"; } ]; c = [ { key = "a"; } ]; d = [ ]; }.${x.key};
})

{
  sum = builtins.foldl' builtins.add 0 [ 1 2 3 4 ];
  order = builtins.foldl' (acc: x: acc + x) "" [ "a" "b" "c" ];
  listBuild = builtins.foldl' (acc: x: [ x ] ++ acc) [ ] [ 1 2 3 ];
  empty = builtins.foldl' (a: b: throw "not called") "init" [ ];
  attrs = builtins.foldl' (acc: x: acc // { ${x} = true; }) { } [ "p" "q" ];
}

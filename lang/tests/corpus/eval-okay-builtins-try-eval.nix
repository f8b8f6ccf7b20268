{
  ok = builtins.tryEval 42;
  thrown = builtins.tryEval (throw "boom");
  assertFail = builtins.tryEval (assert false; 1);
  shallow = (builtins.tryEval [ (throw "inner, not forced") ]).success;
  nested = builtins.tryEval (builtins.tryEval (throw "inner"));
  deep = builtins.tryEval (builtins.deepSeq [ (throw "deep") ] 1);
  inFunction = builtins.tryEval ((x: throw "in ${x}") "function");
  nullValue = builtins.tryEval null;
}

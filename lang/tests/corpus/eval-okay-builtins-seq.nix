[ (builtins.seq 1 2) (builtins.seq [ (throw "seq only forces to weak head normal form") ] "ok")
  (builtins.seq { a = throw "not forced"; } "ok") (builtins.seq (x: throw "body") "ok") ]

# expect: forced by deepSeq
builtins.deepSeq [ { a = throw "forced by deepSeq"; } ] 1

# expect: forced by seq
builtins.seq (throw "forced by seq") 1

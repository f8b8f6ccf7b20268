# expect: deep inside
builtins.deepSeq { a.b.c = [ { d = throw "deep inside"; } ]; } 1

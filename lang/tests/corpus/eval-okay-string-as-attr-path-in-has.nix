let s = { "a b" = { c = 1; }; }; in [ (s ? "a b".c) (s ? ${"a b"}.c) (s ? "a b".d) ]

with { a = "outer"; b = "outer-b"; }; with { a = "inner"; }; [ a b ]

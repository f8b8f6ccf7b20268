(a: with { a = "with"; }; a) "arg"

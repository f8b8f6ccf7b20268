(x: x.a) { a = "from literal"; }

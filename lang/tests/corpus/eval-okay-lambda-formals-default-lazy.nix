let f = { a ? throw "default not used", b ? abort "unused" }: a; in f { a = "given"; }

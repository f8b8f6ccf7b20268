let def = 42; f = { x ? def }: x; in f { }

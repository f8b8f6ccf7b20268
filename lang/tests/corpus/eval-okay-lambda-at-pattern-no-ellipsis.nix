let f = s@{ x }: s.x + x; in f { x = 21; }

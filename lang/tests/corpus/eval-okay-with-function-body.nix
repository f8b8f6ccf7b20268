let f = s: with s; x + y; in f { x = 1; y = 2; }

let mk = n: { inherit n; }; f = { n }: n * 2; in f (mk 21)

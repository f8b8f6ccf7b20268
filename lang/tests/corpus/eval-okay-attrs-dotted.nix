{ a.b = 1; a.c = 2; x.y.z = 3; x.y.w = 4; x.v = 5; }

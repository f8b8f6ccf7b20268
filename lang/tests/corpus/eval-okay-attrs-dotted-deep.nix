{ a.b.c.d.e = "deep"; a.b.c.f = "f"; a.g = "g"; }

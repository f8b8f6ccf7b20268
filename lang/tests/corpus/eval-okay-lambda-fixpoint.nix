let fix = f: let x = f x; in x; s = fix (self: { a = 1; b = self.a + 1; }); in s

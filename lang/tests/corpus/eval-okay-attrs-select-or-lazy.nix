{ present = { a = 1; }.a or (throw "default not evaluated"); }

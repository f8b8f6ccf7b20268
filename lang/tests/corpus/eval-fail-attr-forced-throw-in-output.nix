# expect: b is forced by --strict
{ a = 1; b = throw "b is forced by --strict"; }

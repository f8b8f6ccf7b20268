({ a = throw "overridden"; b = 1; } // { a = 2; }).a

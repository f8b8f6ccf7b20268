({ a = throw "sibling"; b = 2; }).b

let mkCounter = start: { next = start + 1; get = _: start; }; c = mkCounter 5; in [ c.next (c.get null) ]

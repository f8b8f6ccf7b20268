let f = { a ? { b = 1; } }: a.b; in [ (f { }) (f { a = { b = 2; }; }) ]

let f = { }: "empty formals"; g = { ... }: "any set"; in [ (f { }) (g { }) (g { x = 1; }) ]

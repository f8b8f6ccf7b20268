# defaults see the other formals, which shadow outer variables
let a = "outer"; f = { a ? "default-a", b ? a }: b; in [ (f { }) (f { a = "given"; }) ]

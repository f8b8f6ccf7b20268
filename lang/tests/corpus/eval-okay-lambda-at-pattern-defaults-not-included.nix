# the @-bound set is the actual argument: defaults are not added to it
let f = args@{ a ? 1, b ? 2 }: { names = builtins.attrNames args; hasA = args ? a; inherit a b; }; in [ (f { }) (f { b = 5; }) ]

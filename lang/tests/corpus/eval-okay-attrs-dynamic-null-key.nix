# a dynamic attribute whose name evaluates to null is skipped
{ ${null} = 1; b = 2; ${if false then "c" else null} = 3; }

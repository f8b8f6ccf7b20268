# a // b // c: rightmost wins
{ x = 1; } // { x = 2; } // { x = 3; y = 3; }

# attribute sets are sorted by name (byte order) in the output
{ b = 1; a = 2; B = 3; "_" = 4; "1" = 5; aa = 6; "a-b" = 7; "a'" = 8; }

# keywords can be attribute names when quoted; `or` even works unquoted
let s = { "if" = 1; "then" = 2; "else" = 3; "let" = 4; "in" = 5; "rec" = 6; "with" = 7; "inherit" = 8; "assert" = 9; or = 10; }; in
[ s."if" s."then" s."else" s."let" s."in" s."rec" s."with" s."inherit" s."assert" s.or s."or" (s ? or) (s ? "if") ]

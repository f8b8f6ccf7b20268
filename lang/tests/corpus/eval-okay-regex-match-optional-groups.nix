# groups that did not participate in the match are null
let m = builtins.match; in
[ (m "(a)?b" "b") (m "(a)?b" "ab") (m "(a)|(b)" "b") (m "(a)|(b)" "a") (m "x(y)?(z)?" "xz") (m "(a)*" "") ]

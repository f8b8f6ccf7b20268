let m = builtins.match; in
[ (m "(a)(b)(c)" "abc") (m "([a-z]+)-([0-9]+)" "foo-123") (m "((a)(b))" "ab") (m "(a(b(c)))" "abc") (m "x(.*)y" "x123y") ]

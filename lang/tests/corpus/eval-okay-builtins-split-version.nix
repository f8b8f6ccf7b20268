let s = builtins.splitVersion; in
[ (s "1.2.3") (s "1.2pre3") (s "1a2b") (s "1..2") (s "") (s "2.3-rc1") (s "1_2 3") (s "abc") (s "10.20.300") ]

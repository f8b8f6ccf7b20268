let r = builtins.replaceStrings; in
[ (r [ "a" ] [ "A" ] "banana") (r [ "an" "b" ] [ "AN" "B" ] "banana") (r [ "a" "aa" ] [ "1" "2" ] "aaa") (r [ "aa" "a" ] [ "2" "1" ] "aaa")
  (r [ ] [ ] "unchanged") (r [ "x" ] [ "xx" ] "xyx") (r [ "o" ] [ "" ] "foo boo") (r [ "ab" "b" ] [ "b" "X" ] "abb") ]

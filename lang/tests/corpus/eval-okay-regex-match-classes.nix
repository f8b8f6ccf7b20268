let m = builtins.match; in
[ (m "[[:space:]]+" " \t\n") (m "[[:alpha:]]+" "abcXYZ") (m "[[:digit:]]+" "0123") (m "[[:alnum:]_]+" "a_1")
  (m "[[:upper:]][[:lower:]]+" "Hello") (m "[[:punct:]]+" "!?.") (m "[[:xdigit:]]+" "09afAF") (m "[[:alpha:]]+" "ab1")
  (m "([[:alpha:]]+)[[:space:]]*=[[:space:]]*([[:digit:]]+)" "key = 42") ]

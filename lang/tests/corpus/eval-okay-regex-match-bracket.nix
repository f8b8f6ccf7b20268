let m = builtins.match; in
[ (m "[abc]+" "cab") (m "[a-c]+" "abcd") (m "[^0-9]+" "abc") (m "[^0-9]+" "a1") (m "[]a]+" "]a") (m "[a-]+" "-a-")
  (m "[.]" ".") (m "[.]" "x") ]

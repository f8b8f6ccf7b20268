[ (baseNameOf "/a/b/c") (baseNameOf "a/b") (baseNameOf "abc") (baseNameOf "/") (baseNameOf "") (baseNameOf "/a/b/")
  (baseNameOf "a//b") (builtins.baseNameOf "/x/y.tar.gz") (baseNameOf "./rel") ]

[ (baseNameOf ./lib/data.txt) (baseNameOf ./lib) (builtins.baseNameOf ./lib/sub/nested.txt) (baseNameOf /a/b/c.d) ]

let d = builtins.readDir ./lib/readdir; in
{ names = builtins.attrNames d; types = builtins.attrValues d; sub = builtins.readDir ./lib/readdir/sub; }

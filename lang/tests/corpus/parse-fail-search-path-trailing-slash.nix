# expect: syntax error
<nixpkgs/>

# builtins.foldl' over 3,000,000 integers (the list is generated, so this
# measures genList thunks + strict left fold + integer addition).
# expect: 4499998500000
builtins.foldl' (acc: x: acc + x) 0 (builtins.genList (i: i) 3000000)

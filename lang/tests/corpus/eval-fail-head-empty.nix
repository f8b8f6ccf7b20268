# expect: list index 0 is out of bounds
builtins.head [ ]

if builtins.length [ (throw "x") ] == 1 then "length does not force elements" else "?"

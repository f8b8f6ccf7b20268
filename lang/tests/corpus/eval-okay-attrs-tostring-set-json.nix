# Nix 2.8 prints a set with __toString as the result of __toString
[ { __toString = self: "S"; a = 1; } ]

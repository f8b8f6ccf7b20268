builtins.attrValues { z = "last"; a = "first"; m = "middle"; }

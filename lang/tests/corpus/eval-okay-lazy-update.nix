builtins.attrNames ({ a = throw "a"; } // { b = throw "b"; })

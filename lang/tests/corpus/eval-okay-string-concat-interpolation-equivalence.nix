let a = "x"; b = "y"; in [ ("${a}${b}" == a + b) ("pre${a}" == "pre" + a) ]

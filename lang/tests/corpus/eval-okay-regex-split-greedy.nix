[ (builtins.split "a+" "baaab") (builtins.split "(a+)" "baab") ]

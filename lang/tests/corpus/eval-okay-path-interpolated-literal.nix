let name = "data"; in builtins.readFile ./lib/${name}.txt

[ (builtins.typeOf ./.) (builtins.typeOf ./lib/data.txt) (builtins.isPath ./lib) (builtins.isPath "./lib")
  (builtins.typeOf /absolute/path/that/need/not/exist) (builtins.isPath /x) ]

[ (./lib == ./lib) (./lib == ./lib/sub) (./lib/data.txt != ./lib/empty.txt) (builtins.isString (toString ./lib)) (./lib == "./lib") ]

[ (builtins.partition (x: x > 2) [ 1 2 3 4 ]) (builtins.partition (x: true) [ ]) (builtins.partition builtins.isInt [ "a" 1 ]) ]

let x = 1; y = "y"; z = [ ]; in { inherit x y; inherit z; w = 2; }

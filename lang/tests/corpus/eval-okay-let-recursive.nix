let a = b + 1; b = 10; c = [ a b ]; in c

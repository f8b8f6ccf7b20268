[ (./lib/a < ./lib/b) (./lib/b < ./lib/a) (./lib < ./lib/x) ]

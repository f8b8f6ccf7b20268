# expect: undefined variable 'head'
head [ 1 ]

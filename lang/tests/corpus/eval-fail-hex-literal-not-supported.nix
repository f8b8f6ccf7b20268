# expect: undefined variable 'x10'
0x10

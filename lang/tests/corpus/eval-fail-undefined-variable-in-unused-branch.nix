# expect: undefined variable 'nope'
if true then 1 else nope

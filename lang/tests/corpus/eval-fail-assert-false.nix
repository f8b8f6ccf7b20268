# expect: assertion '(1 == 2)' failed
assert 1 == 2; 1

# expect: cannot add a Boolean to an integer
1 + true

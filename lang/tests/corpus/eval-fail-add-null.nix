# expect: cannot add null to an integer
1 + null

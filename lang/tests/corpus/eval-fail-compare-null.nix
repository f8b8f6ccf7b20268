# expect: cannot compare null with null
null < null

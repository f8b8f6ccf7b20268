# expect: infinite recursion encountered
rec { a = b; b = a; }.a

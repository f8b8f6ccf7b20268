rec { double = x: x * 2; quad = x: double (double x); r = quad 3; }.r

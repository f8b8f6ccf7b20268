# the literal 9223372036854775808 is not representable, so build the minimum
-9223372036854775807 - 1

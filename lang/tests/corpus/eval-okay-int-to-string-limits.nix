[ (toString 9223372036854775807) (toString (-9223372036854775807 - 1)) (toString 0) (toString (-0)) ]

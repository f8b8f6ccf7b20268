# a -> b -> c is a -> (b -> c)
[ (false -> true -> false) ((false -> true) -> false) ]

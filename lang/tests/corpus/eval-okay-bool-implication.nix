[ (true -> true) (true -> false) (false -> true) (false -> false) ]

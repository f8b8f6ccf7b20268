[ (false && throw "not evaluated") (true || throw "not evaluated") (false -> throw "not evaluated")
  (true && (1 == 1)) ]

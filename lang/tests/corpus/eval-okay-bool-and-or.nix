[ (true && true) (true && false) (false && true) (false && false)
  (true || true) (true || false) (false || true) (false || false) ]

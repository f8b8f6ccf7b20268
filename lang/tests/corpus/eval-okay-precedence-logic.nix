# ! binds tighter than &&, && tighter than ||, || tighter than ->
[ (!false && false) (true || false && false) (false && true || true) (false -> false || true)
  (true -> false -> false) (!true || true) (false && false -> false) ]

let nest = n: if n == 0 then "bottom" else { inner = nest (n - 1); }; get = n: s: if n == 0 then s else get (n - 1) s.inner; in
get 1000 (nest 1000)

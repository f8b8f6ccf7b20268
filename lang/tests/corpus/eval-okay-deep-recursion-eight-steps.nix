# Non-tail recursion whose every level is one nested evaluation and a run of
# tail steps (six lets, the if): the evaluation depth grows by the same
# multiple of 8 at every level, so a stack check keyed to the depth's
# remainder would never run and the recursion would overflow the stack.
let
  f = n:
    let a = n; in
    let b = a; in
    let c = b; in
    let d = c; in
    let e = d; in
    let g = e; in
    if g == 0 then 0 else 1 + f (g - 1);
in
f 5000

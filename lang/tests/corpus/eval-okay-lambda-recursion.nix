let fact = n: if n <= 1 then 1 else n * fact (n - 1); fib = n: if n < 2 then n else fib (n - 1) + fib (n - 2); in
[ (fact 0) (fact 5) (fact 20) (fib 20) ]

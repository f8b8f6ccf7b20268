let s = { "with space" = 1; "" = 2; "dot.ted" = 3; "${"in"}terp" = 4; "quo\"te" = 5; }; in
[ s (s."with space") (s."") (s."dot.ted") (s.interp) (s.${"with space"}) ]

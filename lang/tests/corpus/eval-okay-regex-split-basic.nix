let s = builtins.split; in
[ (s "," "a,b,c") (s "," "abc") (s "," "") (s "," ",") (s "," "a,,b") (s ",+" "a,,b") ]

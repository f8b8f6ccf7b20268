# list comparison skips equal elements before comparing, so incomparable but equal
# elements do not cause an error
[ ([ { } ] < [ { } ]) ([ { a = 1; } 1 ] < [ { a = 1; } 2 ]) ([ (x: x) ] < [ ]) ([ null 1 ] < [ null 2 ]) ]

let m = builtins.match; in
[ (m "cat|dog" "dog") (m "cat|dog" "cow") (m "(cat|dog)s" "cats") (m "a|b|c" "c") (m "(foo|foobar)" "foobar") ]

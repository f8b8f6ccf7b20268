[ "a\nb" "a\tb" "a\rb" "back\\slash" "quote\"d" "dollar\${x}" "\$" "unknown\q\z" "\ " ]

# expect: value is a list while an integer was expected
[ 1 ] * 2

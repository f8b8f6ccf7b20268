[ 1 "two" { three = 3; } ]

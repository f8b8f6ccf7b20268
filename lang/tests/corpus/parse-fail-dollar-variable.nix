# expect: syntax error, unexpected invalid token
$x

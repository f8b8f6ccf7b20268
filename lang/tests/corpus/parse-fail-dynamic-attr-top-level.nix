# expect: syntax error, unexpected DOLLAR_CURLY
${"x"}

# expect: syntax error, unexpected end of file, expecting ELSE
if true then 1

# tabs are not indentation: nothing is stripped
[ ''
	foo
	bar
'' ''
  	spaces then tab
  x
'' ]

# refers to a variable that is not in scope in this file
secret + 1

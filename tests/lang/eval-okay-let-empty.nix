let in "empty let"

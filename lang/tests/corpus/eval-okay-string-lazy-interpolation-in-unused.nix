let unused = "${throw "never"}"; in "fine"

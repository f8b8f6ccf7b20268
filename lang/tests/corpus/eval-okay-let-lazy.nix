let unused = throw "not evaluated"; also = abort "not evaluated"; x = 1; in x

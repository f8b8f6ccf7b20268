x: y: x * y

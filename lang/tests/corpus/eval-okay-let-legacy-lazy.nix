let { body = "body"; other = throw "not evaluated"; }

let const = a: b: a; in const "kept" (throw "dropped")

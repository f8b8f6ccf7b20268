with { v = "with"; }; [ v (let v = "let"; in v) v ]

let sets = { s = { v = "from s"; }; }; in with sets.s; v

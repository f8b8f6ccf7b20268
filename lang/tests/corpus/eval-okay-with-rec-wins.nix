rec { a = "rec"; b = with { a = "with"; }; a; }

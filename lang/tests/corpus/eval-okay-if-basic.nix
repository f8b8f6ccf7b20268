[ (if true then 1 else 2) (if false then 1 else 2) (if 1 < 2 then "lt" else "ge") ]

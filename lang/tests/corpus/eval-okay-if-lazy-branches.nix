[ (if true then "ok" else throw "no") (if false then throw "no" else "ok") ]

# `?` does not evaluate the attribute values
{ a = throw "no"; b = abort "no"; } ? b

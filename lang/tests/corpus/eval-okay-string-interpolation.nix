let name = "world"; n = "3"; in [ "hello ${name}" "${name}" "${n}${n}" "a${"b"}c" "${"nested ${name}"}" "${""}" ]

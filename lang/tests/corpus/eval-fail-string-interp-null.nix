# expect: cannot coerce null to a string
"${null}"

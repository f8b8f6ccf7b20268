# expect: cannot coerce a Boolean to a string
"${true}"

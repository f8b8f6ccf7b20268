# a path inside a string would be copied to the store; only use its name
"name: ${baseNameOf ./lib/data.txt}"

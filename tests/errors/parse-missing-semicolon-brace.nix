# The last binding of the set has no ';' before the closing '}'.
{ name = "web"; replicas = 2 }

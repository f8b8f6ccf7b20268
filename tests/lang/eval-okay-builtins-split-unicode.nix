builtins.split "é" "aébéc"

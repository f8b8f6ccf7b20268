# No store: Nix writes the text to the store and gives its path; kdeploy refuses (kdeploy::not-supported).
builtins.toFile "notes.txt" "some text"

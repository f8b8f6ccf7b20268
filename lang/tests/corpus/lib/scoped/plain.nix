# Imported by uses-scope.nix with an import from the scope.
"plain file"

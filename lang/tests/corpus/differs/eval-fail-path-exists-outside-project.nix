# Purity: kdeploy refuses to look outside the project, even to test existence (kdeploy::forbidden-path; Nix answers true).
builtins.pathExists /.

# Importing from above the project root is not allowed.
import ../nix_differential.rs

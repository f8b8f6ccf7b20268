# Importing from above the project root is not allowed.
import ../lang_corpus.rs

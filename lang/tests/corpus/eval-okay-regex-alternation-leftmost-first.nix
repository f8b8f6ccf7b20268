# Nix 2.8 (libstdc++ std::regex) picks the first alternative that lets the whole
# match succeed rather than the POSIX leftmost-longest submatch; see DIFFERENCES.md
builtins.match "(a|ab)(c|bcd)(d*)" "abcd"

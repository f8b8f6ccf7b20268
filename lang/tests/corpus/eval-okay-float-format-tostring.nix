# toString on floats uses std::to_string (%f) in Nix 2.8; see DIFFERENCES.md
[ (toString 1.5) (toString 0.1) (toString (0.1 + 0.2)) (toString 1.0) (toString 100.0) (toString (1 / 3.0))
  (toString 1234567.0) (toString 1.0e-7) (toString (-2.5)) ]

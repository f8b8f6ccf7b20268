# Nix 2.8 prints floats with 6 significant digits (printf %g); see DIFFERENCES.md
[ 0.1 (0.1 + 0.2) (1 / 3.0) 3.14159265358979 123456789.123 1234567.0 1.0e10 1.0e21 1.0e-7 0.000001 0.0001 1.0e300 ]

# floats with an integral value: printed without a fractional part by Nix 2.8
[ 1.0 100.0 (0.5 + 0.5) (2.0 * 3) 0.0 ]

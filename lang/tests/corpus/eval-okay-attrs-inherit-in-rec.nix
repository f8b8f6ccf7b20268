let x = 10; in rec { inherit x; y = x + 1; }

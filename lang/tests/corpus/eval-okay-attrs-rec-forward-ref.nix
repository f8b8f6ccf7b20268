rec { x = y + 1; y = z * 2; z = 5; }

let k = "key"; n = 2; in { ${k} = 1; "${k}2" = 2; ${"lit"} = 3; a.${k} = 4; ${k + "x"}.y = 5; ${toString n} = 6; }

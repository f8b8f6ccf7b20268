[ (import ./lib/returns-lambda-set.nix { }) (import ./lib/returns-lambda-set.nix { lib.name = "given"; extra = 1; }) ]

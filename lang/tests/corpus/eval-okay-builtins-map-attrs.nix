[ (builtins.mapAttrs (name: value: "${name}=${toString value}") { a = 1; b = 2; }) (builtins.mapAttrs (n: v: v) { })
  (builtins.mapAttrs (n: v: v * 10) { x = 1; }) ]

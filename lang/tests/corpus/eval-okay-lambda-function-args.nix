[ (builtins.functionArgs ({ a, b ? 1 }: a)) (builtins.functionArgs (x: x)) (builtins.functionArgs ({ ... }: 1))
  (builtins.functionArgs ({ x, ... }@args: x)) (builtins.functionArgs builtins.map) (builtins.functionArgs ({ }: 1)) ]

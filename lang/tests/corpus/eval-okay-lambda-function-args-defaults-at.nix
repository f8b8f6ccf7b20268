builtins.functionArgs (args@{ a, b ? 1, c ? 2, ... }: a)

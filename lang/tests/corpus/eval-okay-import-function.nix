{
  fun = import ./lib/fun.nix { a = 1; };
  funB = import ./lib/fun.nix { a = 1; b = 10; };
  curried = import ./lib/curried.nix 6 7;
  partial = map (import ./lib/curried.nix 2) [ 1 2 3 ];
}

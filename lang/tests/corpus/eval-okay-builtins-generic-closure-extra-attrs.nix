# the first item for a key wins; extra attributes are kept
builtins.genericClosure {
  startSet = [ { key = "a"; n = 0; } { key = "a"; n = 99; } ];
  operator = item: if item.n < 3 then [ { key = "b${toString item.n}"; n = item.n + 1; } { key = "a"; n = 100; } ] else [ ];
}

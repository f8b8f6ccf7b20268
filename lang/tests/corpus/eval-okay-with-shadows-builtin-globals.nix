# global names such as toString are lexically bound, so they win over with
with { toString = x: "with"; }; toString 1

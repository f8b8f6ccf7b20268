{ lib ? { name = "default-lib"; }, ... }: { libName = lib.name; }
